import { GET as listHandler, POST as createHandler } from "@/app/api/senders/route";
import { DELETE as deleteHandler, PATCH as patchHandler } from "@/app/api/senders/[senderId]/route";
import { POST as testHandler } from "@/app/api/senders/[senderId]/test/route";
import { call } from "@/test/support/http";

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
