import { serve } from "inngest/next";
import { getInngest } from "@/inngest/client";
import { functions } from "@/inngest/functions";

export const dynamic = "force-dynamic";

// GET/POST/PUT /api/inngest – the Inngest serve endpoint (introspection, step execution, registration)
export const { GET, POST, PUT } = serve({ client: getInngest(), functions });
