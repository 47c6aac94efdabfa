export const dataSourceDefinition = {
  type: "DATA_SOURCE",
  label: "Data source",
  description: "Rows of an uploaded CSV (uploadId) or of a CSV/Google Sheet on the linked Drive (driveFileId). Output: { rows, rowCount, columns }.",
} as const;
