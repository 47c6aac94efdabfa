/**
 * References below a TRIGGER's `body` (CONTRACT 13) cannot be checked before a delivery arrives: they are accepted at
 * save time in templates and expressions, and a run whose delivery lacks the field fails at that node with a sentence.
 */
import { describe, expect, it } from "vitest";
import * as validateRoute from "@/app/api/workflows/validate/route";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";

const graph = (filter: Record<string, unknown>) => ({
  nodes: [
    { id: "start", type: "TRIGGER", data: {} },
    { id: "f", type: "FILTER", data: filter },
    { id: "ai", type: "AI", data: { prompt: "Summarise {{start.body.ticket.text}} for {{start.body.customer}}", output: [{ name: "s", type: "string" }] } },
    { id: "out", type: "OUTPUT", data: { forEach: "{{f.items}}", to: "{{item.email}}", subject: "{{ai.s}} {{start.body.subject}}", body: "{{start.body}}" } },
  ],
  edges: [
    { source: "start", target: "f" },
    { source: "f", target: "ai" },
    { source: "ai", target: "out" },
  ],
});

describe("references below a TRIGGER's body", () => {
  it("are accepted at save time in templates, lists and expressions", async () => {
    const { token } = await createTestAccount();
    const res = await call(validateRoute.POST, { json: { graph: graph({ source: "{{start.body.people}}", expr: "score >= start.body.minScore && start.body.live" }) }, token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ valid: true, errors: [] });
  });
});
