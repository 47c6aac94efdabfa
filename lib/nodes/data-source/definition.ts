// DATA_SOURCE's client-safe half: rows of an uploaded CSV or of a Drive file.
import { defineNode, nonEmpty, text, type Zod } from "../node-definition";

export const buildDataSourceDataSchema = (zod: Zod) =>
  zod.union(
    [zod.strictObject({ uploadId: nonEmpty(zod, "uploadId") }), zod.strictObject({ driveFileId: nonEmpty(zod, "driveFileId") })],
    { error: "DATA_SOURCE data must be exactly one of { uploadId } or { driveFileId }, a non-empty string" },
  );

export const dataSourceDefinition = defineNode({
  type: "DATA_SOURCE",
  dataSchema: buildDataSourceDataSchema,
  label: "Data source",
  description: "Rows from a CSV upload or a Drive file",
  docs: "Rows of an uploaded CSV (uploadId) or of a CSV/Google Sheet on the linked Drive (driveFileId). Output: { rows, rowCount, columns }.",
  idPrefix: "source",
  accent: "bg-sky-100 text-sky-700",
  defaultData: () => ({ uploadId: "" }),
  outputFields: () => ["rows", "rowCount", "columns"],
  hasInput: true,
  summary: (data, { uploadNames }) =>
    data.driveFileId
      ? `Drive file ${text(data.driveFileId)}`
      : data.uploadId
        ? (uploadNames?.get(text(data.uploadId)) ?? `Upload ${text(data.uploadId)}`)
        : "Choose a CSV",
  // One picker for both keys: a CSV upload or a Drive file, exactly one of them.
  form: [{ name: "uploadId", label: "Upload", kind: "upload-picker", help: "A CSV upload or a CSV/Sheet on the linked Drive." }],
});
