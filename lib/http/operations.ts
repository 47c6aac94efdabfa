import type { OperationSpec } from "./openapi";
import { systemOperations } from "@/lib/schemas/system";
import { integrationsOperations } from "@/lib/schemas/integrations";
import { webhooksOperations } from "@/lib/schemas/webhooks";
import { triggerOperations } from "@/lib/schemas/triggers";
import { runsOperations } from "@/lib/schemas/runs";
import { uploadOperations } from "@/lib/schemas/uploads";
import { workflowOperations } from "@/lib/schemas/workflows";
import { accountOperations } from "@/lib/schemas/accounts";
import { sendingOperations } from "@/lib/schemas/sending";
import { apiKeyOperations } from "@/lib/schemas/api-keys";
import { senderOperations } from "@/lib/schemas/senders";
import { aiOperations } from "@/lib/schemas/ai";

/**
 * Every operation of the API, for /api/openapi.json. Each domain keeps its list beside its zod schemas
 * (lib/schemas/<domain>.ts) and adds one line here.
 */
export const allOperations: OperationSpec[] = [...systemOperations, ...accountOperations, ...apiKeyOperations, ...uploadOperations, ...workflowOperations, ...runsOperations, ...sendingOperations, ...senderOperations, ...aiOperations, ...integrationsOperations, ...webhooksOperations, ...triggerOperations];
