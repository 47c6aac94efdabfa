import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";
import { paginationQuery } from "@/lib/http/pagination";

// Checked before trimming and lower-casing: printable ASCII only, so CR/LF header injection
// (`a@x.com\r\nBcc: …`), look-alike letters and characters that lower-case into ASCII (the Kelvin sign K)
// never reach a mail header or the unique index.
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const EMAIL_SHAPE =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export const emailField = z
  .string()
  .max(254)
  .regex(PRINTABLE_ASCII, "The email address may contain only printable ASCII characters")
  .trim()
  .toLowerCase()
  .regex(EMAIL_SHAPE, "Enter a valid email address, like name@example.com")
  .describe("Email address; trimmed and lower-cased");

export const passwordField = z
  .string()
  .min(8, "The password must be at least 8 characters")
  .max(128, "The password must be at most 128 characters");

const NO_CONTROL_CHARACTERS = /^[^\p{Cc}]*$/u;

export const fullNameField = z
  .string()
  .trim()
  .min(1, "Enter your name")
  .max(100, "The name must be at most 100 characters")
  .regex(NO_CONTROL_CHARACTERS, "The name must not contain control characters");

export const registerBody = z.strictObject({ email: emailField, password: passwordField, fullName: fullNameField });
export const verifyEmailBody = z.strictObject({
  email: emailField,
  // Any short string or number is taken (a malformed code is simply a wrong one: 400 invalid_otp);
  // a number loses its leading zeros in JSON, so it is padded back to 6 digits.
  otp: z.union([z.string().trim().min(1).max(20), z.number().int().nonnegative().max(999_999).transform((n) => String(n).padStart(6, "0"))])
    .describe("The 6-digit code from the email"),
});
export const emailOnlyBody = z.strictObject({ email: emailField });
// Login checks the stored hash, so the length rules of registration do not apply (only a sane cap).
export const loginBody = z.strictObject({ email: emailField, password: z.string().min(1).max(1024) });
export const refreshTokenBody = z.strictObject({ refreshToken: z.string().min(1).max(200) });
export const changePasswordBody = z.strictObject({
  currentPassword: z.string().min(1).max(1024),
  newPassword: passwordField,
});
export const resetPasswordBody = z.strictObject({
  email: emailField,
  otp: verifyEmailBody.shape.otp,
  newPassword: passwordField,
});
export const updateAccountBody = z.strictObject({ fullName: fullNameField.optional() });

export const aiProviders = ["openai", "anthropic", "openai-compatible"] as const;

/** Default calls in flight per provider key when the account sets no maxConcurrency. */
export const DEFAULT_AI_MAX_CONCURRENCY = 8;

/** The pacing and price settings of the AI provider (all optional; absent: not set). */
function aiLimitFields() {
  const price = (what: string) =>
    z.number().min(0, `${what} must be 0 or more`).max(10_000, `${what} must be at most 10,000 USD per million tokens`).optional().describe(`${what} in USD per million tokens; overrides the price table`);
  return {
    requestsPerMinute: z.number().int("requestsPerMinute must be a whole number").min(1).max(1_000_000).optional()
      .describe("Model calls per minute allowed with this key (shared by every run)"),
    tokensPerMinute: z.number().int("tokensPerMinute must be a whole number").min(1).max(1_000_000_000).optional()
      .describe("Tokens (input + output) per minute allowed with this key"),
    maxConcurrency: z.number().int("maxConcurrency must be a whole number").min(1).max(256).optional()
      .describe(`Model calls in flight at once with this key (default ${DEFAULT_AI_MAX_CONCURRENCY})`),
    inputPricePerMillion: price("inputPricePerMillion"),
    outputPricePerMillion: price("outputPricePerMillion"),
    maxCostPerRunUsd: z.number().positive("maxCostPerRunUsd must be more than 0").max(1_000_000).optional()
      .describe("A spend cap on the model calls of one run, all AI nodes together"),
  };
}
export const aiProviderBody = z
  .strictObject({
    provider: z.enum(aiProviders),
    apiKey: z.string().trim().min(1, "Enter the API key").max(500).regex(PRINTABLE_ASCII, "The API key must be printable ASCII"),
    model: z.string().trim().min(1).max(200).optional(),
    baseUrl: z.url({ protocol: /^https?$/, error: "The base URL must be an http(s) URL" }).max(2000).optional(),
    ...aiLimitFields(),
  })
  .superRefine((value, ctx) => {
    if (value.provider === "openai-compatible" && !value.baseUrl) {
      ctx.addIssue({ code: "custom", path: ["baseUrl"], message: "baseUrl is required for the openai-compatible provider" });
    }
  });

export const mailboxQuery = z.strictObject({ to: z.string().trim().toLowerCase().max(254).optional(), ...paginationQuery });

export const registerResponse = z.object({ message: z.string(), email: z.string() });
export const tokenPairResponse = z.object({
  accessToken: z.string(),
  refreshToken: z.string(),
  expiresIn: z.number().int().describe("Seconds until the access token expires (900)"),
  tokenType: z.literal("Bearer"),
});
export const messageResponse = z.object({ message: z.string() });
export const aiSettingsResponse = z.object({
  provider: z.enum(aiProviders),
  model: z.string().nullable(),
  baseUrl: z.string().nullable(),
  keyLast4: z.string(),
  requestsPerMinute: z.number().int().nullable(),
  tokensPerMinute: z.number().int().nullable(),
  maxConcurrency: z.number().int().describe(`Calls in flight per key (default ${DEFAULT_AI_MAX_CONCURRENCY})`),
  inputPricePerMillion: z.number().nullable(),
  outputPricePerMillion: z.number().nullable(),
  maxCostPerRunUsd: z.number().nullable(),
});
export const accountResponse = z.object({
  id: z.string(),
  email: z.string(),
  fullName: z.string(),
  createdAt: z.string().describe("ISO 8601 UTC"),
  ai: aiSettingsResponse.nullable(),
});
export const mailboxMessageResponse = z.object({
  id: z.string(),
  from: z.string(),
  to: z.string(),
  subject: z.string(),
  text: z.string().nullable(),
  html: z.string().nullable(),
  kind: z.string(),
  headers: z.record(z.string(), z.string()).describe("Extra headers, e.g. List-Unsubscribe"),
  createdAt: z.string(),
});
export const mailboxPageResponse = z.object({ items: z.array(mailboxMessageResponse), nextCursor: z.string().nullable() });

export type AiSettings = z.infer<typeof aiSettingsResponse>;
export type AccountView = z.infer<typeof accountResponse>;
export type TokenPair = z.infer<typeof tokenPairResponse>;

export const accountOperations: OperationSpec[] = [
  {
    method: "post", path: "/api/auth/register", operationId: "register", tag: "Accounts", auth: false,
    summary: "Create an account; a 6-digit code is emailed", body: registerBody,
    responses: { 201: { description: "Registered; verify the emailed code", schema: registerResponse } },
    errors: ["email_taken", "rate_limited"],
  },
  {
    method: "post", path: "/api/auth/verify-email", operationId: "verifyEmail", tag: "Accounts", auth: false,
    summary: "Verify the emailed code and receive the first token pair", body: verifyEmailBody,
    responses: { 200: { description: "Verified", schema: tokenPairResponse } },
    errors: ["invalid_otp", "already_verified", "rate_limited"],
  },
  {
    method: "post", path: "/api/auth/resend-otp", operationId: "resendOtp", tag: "Accounts", auth: false,
    summary: "Email a new code (the same answer whether or not the address exists)", body: emailOnlyBody,
    responses: { 202: { description: "Accepted", schema: messageResponse } },
    errors: ["rate_limited"],
  },
  {
    method: "post", path: "/api/auth/login", operationId: "login", tag: "Accounts", auth: false,
    summary: "Exchange email and password for a token pair", body: loginBody,
    responses: { 200: { description: "Signed in", schema: tokenPairResponse } },
    errors: ["invalid_credentials", "email_not_verified", "rate_limited"],
  },
  {
    method: "post", path: "/api/auth/refresh-token", operationId: "refreshToken", tag: "Accounts", auth: false,
    summary: "Rotate a refresh token into a new pair (reuse of a rotated token revokes its family)", body: refreshTokenBody,
    responses: { 200: { description: "New pair", schema: tokenPairResponse } },
    errors: ["invalid_token"],
  },
  {
    method: "post", path: "/api/auth/logout", operationId: "logout", tag: "Accounts", auth: false,
    summary: "Revoke the refresh token's family", body: refreshTokenBody,
    responses: { 204: { description: "Signed out" } },
  },
  {
    method: "post", path: "/api/auth/forgot-password", operationId: "forgotPassword", tag: "Accounts", auth: false,
    summary: "Email a password-reset code to a verified account (the same answer whether or not it exists)", body: emailOnlyBody,
    responses: { 202: { description: "Accepted", schema: messageResponse } },
    errors: ["rate_limited"],
  },
  {
    method: "post", path: "/api/auth/reset-password", operationId: "resetPassword", tag: "Accounts", auth: false,
    summary: "Set a new password with the emailed reset code; every earlier token is revoked", body: resetPasswordBody,
    responses: { 200: { description: "Password set; signed in", schema: tokenPairResponse } },
    errors: ["invalid_otp", "rate_limited"],
  },
  {
    method: "get", path: "/api/account", operationId: "getAccount", tag: "Accounts", auth: true, scope: "person",
    summary: "The signed-in account", responses: { 200: { description: "Account", schema: accountResponse } },
  },
  {
    method: "patch", path: "/api/account", operationId: "updateAccount", tag: "Accounts", auth: true, scope: "person",
    summary: "Change the account's name", body: updateAccountBody,
    responses: { 200: { description: "Account", schema: accountResponse } },
  },
  {
    method: "post", path: "/api/account/password", operationId: "changePassword", tag: "Accounts", auth: true, scope: "person",
    summary: "Change the password; every token issued before is revoked", body: changePasswordBody,
    responses: { 204: { description: "Changed" } },
    errors: ["invalid_credentials", "rate_limited"],
  },
  {
    method: "put", path: "/api/account/ai-provider", operationId: "setAiProvider", tag: "Accounts", auth: true, scope: "person",
    summary: "Store the AI provider settings (the key is encrypted; only its last 4 characters are shown)", body: aiProviderBody,
    responses: { 200: { description: "Stored", schema: aiSettingsResponse } },
  },
  {
    method: "delete", path: "/api/account/ai-provider", operationId: "deleteAiProvider", tag: "Accounts", auth: true, scope: "person",
    summary: "Forget the AI provider settings", responses: { 204: { description: "Removed" } },
  },
  {
    method: "get", path: "/api/dev/mailbox", operationId: "listMailbox", tag: "Development", auth: false,
    summary: "The local mailbox, newest first (only while no RESEND_API_KEY is set; 404 otherwise)", query: mailboxQuery,
    responses: { 200: { description: "Messages", schema: mailboxPageResponse }, 404: { description: "The mailbox transport is not active" } },
  },
];
