import { POST as enqueueHandler } from "@/app/api/workflows/[workflowId]/run/route";
import { GET as emailsHandler } from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/emails/route";
import { call } from "@/test/support/http";

/** POST …/run with a JSON body (`{ mode, until }`). */
export function enqueueWith(token: string, workflowId: string, json: unknown, headers: Record<string, string> = {}) {
  return call(enqueueHandler, { method: "POST", path: `/api/workflows/${workflowId}/run`, token, params: { workflowId }, json, headers });
}

export function listEmails(token: string, runId: string, nodeId: string, query = "") {
  return call(emailsHandler, { path: `/api/workflows/runs/${runId}/nodes/${nodeId}/emails${query}`, token, params: { runId, nodeId } });
}

/** TRIGGER → DATA_SOURCE → OUTPUT over `rows` of (email, name). */
export const personGraph = (uploadId: string, out: Record<string, unknown> = {}) => ({
  nodes: [
    { id: "t", type: "TRIGGER", data: {} },
    { id: "src", type: "DATA_SOURCE", data: { uploadId } },
    { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "Hello {{item.name}}", ...out } },
  ],
  edges: [
    { source: "t", target: "src" },
    { source: "src", target: "out" },
  ],
});
