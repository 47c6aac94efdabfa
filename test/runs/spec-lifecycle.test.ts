import { beforeAll, describe, expect, it } from "vitest";
import { POST as uploadHandler } from "@/app/api/uploads/route";
import { POST as createWorkflowHandler } from "@/app/api/workflows/route";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { enqueue, fakeResendForRuns, getRun, startTestExecutor } from "./helpers";

const fixture = fakeResendForRuns();
let executor: EmbeddedExecutor;

beforeAll(() => {
  executor = startTestExecutor();
});

describe("the spec's lifecycle through the real endpoints", () => {
  it("upload CSV → create workflow → enqueue → poll until SUCCESS → the right emails", async () => {
    const { token } = await createTestAccount();
    const form = new FormData();
    const csv = "name,email,rating,comment\nAnn,ann@example.com,5,\"Great, really\"\nBob,bob@example.com,2,meh\nCy,cy@example.com,4,good\n";
    form.append("file", new Blob([csv], { type: "text/csv" }), "reviews.csv");
    const upload = await call(uploadHandler, { method: "POST", path: "/api/uploads", body: form, token });
    expect(upload.status).toBe(201);
    expect(upload.body).toMatchObject({ rowCount: 3, columns: ["name", "email", "rating", "comment"] });

    const workflow = await call(createWorkflowHandler, {
      method: "POST",
      path: "/api/workflows",
      token,
      json: {
        name: "Thank happy reviewers",
        graph: {
          nodes: [
            { id: "trigger", type: "TRIGGER", data: {} },
            { id: "src", type: "DATA_SOURCE", data: { uploadId: upload.body.uploadId } },
            { id: "happy", type: "FILTER", data: { source: "{{src.rows}}", expr: "rating >= 4" } },
            {
              id: "mail",
              type: "OUTPUT",
              data: {
                forEach: "{{happy.items}}",
                to: "{{item.email}}",
                subject: "Thank you, {{item.name}}",
                body: "<p>You wrote: {{item.comment}}</p>",
                format: "html",
              },
            },
          ],
          edges: [
            { source: "trigger", target: "src" },
            { source: "src", target: "happy" },
            { source: "happy", target: "mail" },
          ],
        },
      },
    });
    expect(workflow.status).toBe(201);

    const enqueued = await enqueue(token, workflow.body.id);
    expect(enqueued.status).toBe(202);
    expect(enqueued.body.status).toBe("PENDING");
    await executor.idle();
    const run = (await getRun(token, enqueued.body.runId)).body;
    expect(run).toMatchObject({
      runId: enqueued.body.runId,
      workflowId: workflow.body.id,
      workflowVersion: 1,
      status: "SUCCESS",
      result: { emailsSent: 2, filteredOut: 1, totalRows: 3 },
    });
    expect(Object.values(run.nodes).map((n) => (n as { status: string }).status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS"]);
    expect(fixture.resend.emails().map((e) => ({ to: e.to, subject: e.subject, html: e.html }))).toEqual([
      { to: ["ann@example.com"], subject: "Thank you, Ann", html: "<p>You wrote: Great, really</p>" },
      { to: ["cy@example.com"], subject: "Thank you, Cy", html: "<p>You wrote: good</p>" },
    ]);
  });
});
