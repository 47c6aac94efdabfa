import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";
import { paginationQuery } from "@/lib/http/pagination";

export const uploadIdParams = z.object({ uploadId: z.string() });

export const listUploadsQuery = z.strictObject(paginationQuery);

export const uploadRowsQuery = z.strictObject({
  offset: z.coerce.number().int().min(0).max(100_000_000).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const uploadSchema = z.object({
  uploadId: z.string().describe("upl_…"),
  filename: z.string().describe("As the client sent it (path parts and control characters removed); data only"),
  rowCount: z.number().int(),
  columns: z.array(z.string()),
  sizeBytes: z.number().int(),
  createdAt: z.string().describe("ISO 8601 UTC"),
});

const csvRow = z.record(z.string(), z.string()).describe("One CSV row keyed by column name; every cell a string");

export const uploadDetailSchema = uploadSchema.extend({ preview: z.array(csvRow).describe("The first 20 rows") });
export const uploadListSchema = z.object({ items: z.array(uploadSchema), nextCursor: z.string().nullable() });
export const uploadRowsSchema = z.object({ items: z.array(csvRow), total: z.number().int() });

/** Documents the multipart body (the handler streams it with busboy instead of parsing it with zod). */
export const uploadMultipartBody = z.object({
  file: z.string().meta({ format: "binary" }).describe("The CSV file (UTF-8; comma, semicolon or tab separated; first line is the header)"),
});

/** tus 1.0 request headers, documented once. */
const tusHeader = (name: string, description: string, required = true) => ({ name, description, required });
const tusResumable = tusHeader("Tus-Resumable", "Always `1.0.0` (another version: 412 `unsupported_tus_version` with `Tus-Version`)");

/**
 * Resumable uploads (tus 1.0 core + creation + termination + expiration). Any tus client works
 * (tus-js-client, tus-py-client, Uppy); pieces of at most 4 MiB. Statuses outside the problem table: 410
 * `upload_expired` (unfinished for 24 h), 412 `unsupported_tus_version`, 423 `locked` (another request is writing
 * the same upload: retry).
 */
function tusOperations(): OperationSpec[] {
  const pieceBody = z.string().describe("The next bytes of the file, at most 4 MiB (4,194,304 bytes)");
  return [
    {
      method: "options",
      path: "/api/uploads/tus",
      operationId: "tusOptions",
      summary: "tus discovery: 204 with Tus-Version 1.0.0, Tus-Extension creation,termination,expiration and Tus-Max-Size (UPLOAD_MAX_BYTES)",
      tag: "Uploads",
      auth: false,
      responses: { 204: { description: "Capabilities in the response headers" } },
    },
    {
      method: "post",
      path: "/api/uploads/tus",
      operationId: "createTusUpload",
      summary: "Start a resumable upload: 201 with `Location: /api/uploads/tus/tus_…` and `Upload-Expires` (24 h)",
      tag: "Uploads",
      auth: true,
      scope: "uploads:write",
      headers: [
        tusResumable,
        tusHeader("Upload-Length", "The file's size in bytes, at most Tus-Max-Size (else 413)"),
        tusHeader("Upload-Metadata", "`filename <base64>` (and any other keys, e.g. `filetype`)", false),
      ],
      responses: { 201: { description: "Created; PATCH the bytes to `Location`" } },
      errors: ["bad_request", "payload_too_large"],
    },
    {
      method: "head",
      path: "/api/uploads/tus/:tusId",
      operationId: "getTusUploadOffset",
      summary: "Where to resume: 200 with Upload-Offset and Upload-Length (and Flowmail-Upload-Id once the upload is parsed); 410 once expired",
      tag: "Uploads",
      auth: true,
      scope: "uploads:write",
      headers: [tusResumable],
      responses: { 200: { description: "Offset in the headers; `Cache-Control: no-store`" } },
      errors: ["not_found"],
    },
    {
      method: "patch",
      path: "/api/uploads/tus/:tusId",
      operationId: "appendTusUpload",
      summary:
        "Append bytes at Upload-Offset: 204 with the new Upload-Offset; the last piece parses the CSV and answers 204 with `Flowmail-Upload-Id: upl_…` (or 422 invalid_csv)",
      tag: "Uploads",
      auth: true,
      scope: "uploads:write",
      headers: [tusResumable, tusHeader("Upload-Offset", "The offset HEAD reported (else 409 conflict, nothing stored)")],
      body: pieceBody,
      bodyContentType: "application/offset+octet-stream",
      responses: { 204: { description: "Stored; new offset in Upload-Offset" } },
      errors: ["bad_request", "not_found", "conflict", "payload_too_large", "unsupported_media_type", "invalid_csv"],
    },
    {
      method: "options",
      path: "/api/uploads/tus/:tusId",
      operationId: "tusUploadOptions",
      summary: "tus discovery on an upload's address (the same capabilities as OPTIONS /api/uploads/tus; a browser's CORS preflight)",
      tag: "Uploads",
      auth: false,
      responses: { 204: { description: "Capabilities in the response headers" } },
    },
    {
      method: "delete",
      path: "/api/uploads/tus/:tusId",
      operationId: "terminateTusUpload",
      summary: "Terminate a resumable upload and drop its received bytes (an upload it already became stays)",
      tag: "Uploads",
      auth: true,
      scope: "uploads:write",
      headers: [tusResumable],
      responses: { 204: { description: "Terminated" } },
      errors: ["not_found"],
    },
  ];
}

export const uploadOperations: OperationSpec[] = [
  {
    method: "post",
    path: "/api/uploads",
    operationId: "createUpload",
    summary: "Upload a CSV file (multipart field `file`)",
    tag: "Uploads",
    auth: true,
    scope: "uploads:write",
    body: uploadMultipartBody,
    bodyContentType: "multipart/form-data",
    responses: { 201: { description: "Stored", schema: uploadSchema } },
    errors: ["missing_file", "bad_request", "payload_too_large", "unsupported_media_type", "invalid_csv"],
  },
  {
    method: "get",
    path: "/api/uploads",
    operationId: "listUploads",
    summary: "List uploads, newest first",
    tag: "Uploads",
    auth: true,
    scope: "uploads:read",
    query: listUploadsQuery,
    responses: { 200: { description: "A page of uploads", schema: uploadListSchema } },
    errors: ["validation_failed"],
  },
  {
    method: "get",
    path: "/api/uploads/:uploadId",
    operationId: "getUpload",
    summary: "Upload metadata with a 20-row preview",
    tag: "Uploads",
    auth: true,
    scope: "uploads:read",
    responses: { 200: { description: "The upload", schema: uploadDetailSchema } },
    errors: ["not_found"],
  },
  {
    method: "get",
    path: "/api/uploads/:uploadId/rows",
    operationId: "getUploadRows",
    summary: "Page through an upload's rows",
    tag: "Uploads",
    auth: true,
    scope: "uploads:read",
    query: uploadRowsQuery,
    responses: { 200: { description: "Rows [offset, offset + limit)", schema: uploadRowsSchema } },
    errors: ["not_found", "validation_failed"],
  },
  {
    method: "delete",
    path: "/api/uploads/:uploadId",
    operationId: "deleteUpload",
    summary: "Delete an upload (workflows naming it then fail at their DATA_SOURCE node)",
    tag: "Uploads",
    auth: true,
    scope: "uploads:write",
    responses: { 204: { description: "Deleted" } },
    errors: ["not_found"],
  },
  ...tusOperations(),
];
