import { GET as listHandler, POST as createHandler } from "@/app/api/senders/route";
import { DELETE as deleteHandler, PATCH as patchHandler } from "@/app/api/senders/[senderId]/route";
import { POST as testHandler } from "@/app/api/senders/[senderId]/test/route";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { call } from "@/test/support/http";
import { getRun, runToEnd } from "@/test/runs/helpers";

export const senderApi = (token: string) => ({
  list: () => call(listHandler, { path: "/api/senders", token }),
  create: (json: unknown) => call(createHandler, { method: "POST", path: "/api/senders", token, json }),
  patch: (senderId: string, json: unknown) => call(patchHandler, { method: "PATCH", path: `/api/senders/${senderId}`, token, json, params: { senderId } }),
  remove: (senderId: string) => call(deleteHandler, { method: "DELETE", path: `/api/senders/${senderId}`, token, params: { senderId } }),
  test: (senderId: string) => call(testHandler, { method: "POST", path: `/api/senders/${senderId}/test`, token, params: { senderId } }),
});

export const smtpSender = (port: number, extra: Record<string, unknown> = {}) => ({
  kind: "smtp",
  name: "Our SMTP",
  from: "Team <team@example.com>",
  smtp: { host: "127.0.0.1", port, secure: false, username: "mailer", password: "s3cret-pass" },
  ...extra,
});

/**
 * runToEnd, then waits for the run's final status: under load the executor may not have been woken yet when
 * runToEnd asks whether it is idle.
 */
export async function runToFinish(executor: EmbeddedExecutor, token: string, workflowId: string) {
  return finished(executor, token, (await runToEnd(executor, token, workflowId)).runId);
}

/** The run once its status is final (the executor idle, asked again until it is). */
export async function finished(executor: EmbeddedExecutor, token: string, runId: string) {
  await executor.idle();
  let run = (await getRun(token, runId)).body;
  for (let i = 0; i < 600 && run.status !== "SUCCESS" && run.status !== "FAILED"; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    await executor.idle();
    run = (await getRun(token, runId)).body;
  }
  return run;
}
