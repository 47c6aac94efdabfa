import { graphJsonSchema } from "@/lib/graph/schema";
import { route } from "@/lib/http/route";


// GET /api/schemas/graph – the graph's JSON Schema, public (it describes a format, not anyone's data)
export const GET = route({ auth: false }, async () =>
  new Response(JSON.stringify(graphJsonSchema()), {
    status: 200,
    headers: { "Content-Type": "application/schema+json", "Cache-Control": "public, max-age=300" },
  }));
