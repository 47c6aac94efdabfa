import "server-only";
import { sanitizeProviderMessage } from "@/lib/net/provider-message";
import { NodeError, type NodeExecutor } from "../types";

export const dataSourceExecutor: NodeExecutor<"DATA_SOURCE"> = {
  async execute(node, rt) {
    const data = node.data as { uploadId?: string; driveFileId?: string };
    if (data.uploadId) {
      const { uploads } = rt.ports;
      // A small upload comes with its rows when the port can read both at once (findWithRows).
      const found = uploads.findWithRows
        ? await uploads.findWithRows(rt.accountId, data.uploadId)
        : { upload: await uploads.find(rt.accountId, data.uploadId), rows: undefined };
      const upload = found?.upload;
      if (!upload) throw new NodeError(`Upload ${data.uploadId} no longer exists: upload the CSV again and point this node at it.`);
      // An explicit limit: the default (MAX_SAFE_INTEGER) overflows the int column it is compared with.
      const rows = found?.rows ?? (await uploads.readRows(upload, 0, upload.rowCount));
      return { kind: "done", output: { rows, rowCount: rows.length, columns: upload.columns }, itemsOut: rows.length };
    }
    if (data.driveFileId) {
      try {
        const { columns, rows } = await rt.ports.drive.readRows(rt.accountId, data.driveFileId);
        return { kind: "done", output: { rows, rowCount: rows.length, columns }, itemsOut: rows.length };
      } catch (error) {
        // The Drive adapter speaks in sentences meant for people (link expired, file not found, not a CSV), but they
        // quote names and parser text from the Drive file: bounded and cleaned like any provider text.
        if (error instanceof NodeError) throw new NodeError(sanitizeProviderMessage(error.message, 300), { cause: error });
        throw error;
      }
    }
    throw new NodeError("This data source names neither an upload nor a Drive file: pick one in the node's settings.");
  },
};
