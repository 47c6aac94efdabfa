/** Every error a client may see: a stable `code`, its HTTP status and title. */
export const ERROR_CODES = {
  malformed_json: { status: 400, title: "Malformed JSON" },
  bad_request: { status: 400, title: "Bad request" },
  missing_file: { status: 400, title: "Missing file" },
  invalid_otp: { status: 400, title: "Invalid code" },
  unauthorized: { status: 401, title: "Unauthorized" },
  invalid_token: { status: 401, title: "Invalid token" },
  token_expired: { status: 401, title: "Token expired" },
  invalid_credentials: { status: 401, title: "Invalid credentials" },
  email_not_verified: { status: 403, title: "Email not verified" },
  forbidden: { status: 403, title: "Forbidden" },
  insufficient_scope: { status: 403, title: "Insufficient scope" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  email_taken: { status: 409, title: "Email taken" },
  already_verified: { status: 409, title: "Already verified" },
  google_not_connected: { status: 409, title: "Google not connected" },
  conflict: { status: 409, title: "Conflict" },
  api_key_limit_reached: { status: 409, title: "API key limit reached" },
  run_not_failed: { status: 409, title: "Run not failed" },
  run_finished: { status: 409, title: "Run finished" },
  sender_in_use: { status: 409, title: "Sender in use" },
  output_expired: { status: 410, title: "Output expired" },
  payload_too_large: { status: 413, title: "Payload too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  validation_failed: { status: 422, title: "Validation failed" },
  invalid_graph: { status: 422, title: "Unprocessable graph" },
  invalid_schedule: { status: 422, title: "Invalid schedule" },
  invalid_csv: { status: 422, title: "Invalid CSV" },
  sender_test_failed: { status: 422, title: "Test email failed" },
  rate_limited: { status: 429, title: "Too many requests" },
  internal_error: { status: 500, title: "Internal server error" },
  google_not_configured: { status: 503, title: "Google not configured" },
  service_unavailable: { status: 503, title: "Service unavailable" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export type ErrorItem = { path: string; code: string; message: string; nodeId?: string };

type AppErrorOptions = {
  errors?: ErrorItem[];
  headers?: Record<string, string>;
  /** Extra members of the problem document (RFC 9457 extensions). */
  extensions?: Record<string, unknown>;
  cause?: unknown;
};

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  readonly errors?: ErrorItem[];
  readonly headers?: Record<string, string>;
  readonly extensions?: Record<string, unknown>;

  constructor(code: ErrorCode, detail: string, options: AppErrorOptions = {}) {
    super(detail, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.title = ERROR_CODES[code].title;
    this.errors = options.errors;
    this.headers = options.headers;
    this.extensions = options.extensions;
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);
