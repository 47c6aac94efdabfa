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
  file: z.string().describe("The CSV file (UTF-8; comma, semicolon or tab separated; first line is the header)"),
});

export const uploadOperations: OperationSpec[] = [
  {
    method: "post",
    path: "/api/uploads",
    operationId: "createUpload",
    summary: "Upload a CSV file (multipart field `file`)",
    tag: "Uploads",
    auth: true,
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
    responses: { 204: { description: "Deleted" } },
    errors: ["not_found"],
  },
];
