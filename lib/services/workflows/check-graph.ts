import "server-only";
import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Db } from "@/db/client";
import { accounts, googleLinks, senders, uploads } from "@/db/schema";
import { batchModeErrors } from "@/lib/graph/validate-ai-batch";
import { itemColumnProblems, type UploadColumns } from "@/lib/graph/list-shapes";
import { validateGraph, type GraphError } from "@/lib/graph/validate";
import { AppError } from "@/lib/errors";

type DataSourceRef = { nodeId: string | undefined; path: string; uploadId?: string; driveFileId?: string };

const MAX_ID_LENGTH = 100;

/**
 * The pure graph validation plus the checks that need the database: every `uploadId` must name one of the
 * account's live uploads (`unknown_upload` — the same answer for missing, deleted, and another account's), and a
 * `driveFileId` needs an active Google Drive link, and an OUTPUT's `senderId` must name one of the account's senders.
 */
export async function checkGraph(db: Db, accountId: string, input: unknown): Promise<{ valid: boolean; errors: GraphError[] }> {
  const result = validateGraph(input);
  // An oversized graph is refused on its size alone: no per-node database work for 10,000 nodes.
  if (result.errors.some((error) => error.code === "too_large")) return { valid: false, errors: result.errors };
  const refs = dataSourceRefs(input);
  const live = await liveUploads(db, accountId, refs);
  const errors = [
    ...result.errors,
    ...uploadErrors(refs, live),
    ...columnErrors(input, live),
    ...(await checkDrive(db, accountId, refs)),
    ...(await checkSenders(db, accountId, input)),
    ...(await checkBatchMode(db, accountId, input)),
  ];
  return { valid: errors.length === 0, errors };
}

/** Throws the contract's 422 `invalid_graph` listing every problem. */
export async function assertValidGraph(db: Db, accountId: string, input: unknown): Promise<void> {
  const { valid, errors } = await checkGraph(db, accountId, input);
  if (!valid) {
    const count = errors.length === 1 ? "1 problem" : `${errors.length} problems`;
    throw new AppError("invalid_graph", `The graph has ${count}: see \`errors\`. Nothing was saved.`, { errors });
  }
}

/**
 * DATA_SOURCE references read from the raw input (not the parsed graph), so an unknown upload is reported
 * together with the graph's other problems even when the graph does not parse.
 */
function dataSourceRefs(input: unknown): DataSourceRef[] {
  const nodes = isRecord(input) && Array.isArray(input.nodes) ? input.nodes : [];
  const refs: DataSourceRef[] = [];
  nodes.forEach((node: unknown, index) => {
    if (!isRecord(node) || node.type !== "DATA_SOURCE" || !isRecord(node.data)) return;
    const nodeId = typeof node.id === "string" ? node.id : undefined;
    const { uploadId, driveFileId } = node.data;
    if (typeof uploadId === "string" && uploadId !== "") refs.push({ nodeId, uploadId, path: `graph.nodes[${index}].data.uploadId` });
    if (typeof driveFileId === "string" && driveFileId !== "") {
      refs.push({ nodeId, driveFileId, path: `graph.nodes[${index}].data.driveFileId` });
    }
  });
  return refs;
}

/** The account's live uploads among those the graph names, with their file names and columns. */
async function liveUploads(db: Db, accountId: string, refs: DataSourceRef[]): Promise<Map<string, UploadColumns>> {
  const wanted = [...new Set(refs.flatMap((ref) => (ref.uploadId && ref.uploadId.length <= MAX_ID_LENGTH ? [ref.uploadId] : [])))];
  const found = wanted.length
    ? await db
        .select({ id: uploads.id, filename: uploads.filename, columns: uploads.columns })
        .from(uploads)
        .where(and(inArray(uploads.id, wanted), eq(uploads.accountId, accountId), eq(uploads.source, "upload"), isNull(uploads.deletedAt)))
    : [];
  return new Map(found.map((row) => [row.id, { filename: row.filename, columns: row.columns }]));
}

function uploadErrors(refs: DataSourceRef[], live: Map<string, UploadColumns>): GraphError[] {
  return refs
    .filter((ref) => ref.uploadId !== undefined && !live.has(ref.uploadId))
    .map((ref) => graphError(ref, "unknown_upload", `Upload ${shorten(ref.uploadId!)} does not exist (or was deleted)`));
}

/** `{{item.x}}` naming a column the upload feeding the OUTPUT does not have: knowable now, not only at run time. */
function columnErrors(input: unknown, live: Map<string, UploadColumns>): GraphError[] {
  return itemColumnProblems(input, live).map((p) => ({ path: p.path, code: "unknown_column", message: p.message, nodeId: p.nodeId }));
}

async function checkDrive(db: Db, accountId: string, refs: DataSourceRef[]): Promise<GraphError[]> {
  const driveRefs = refs.filter((ref) => ref.driveFileId !== undefined);
  if (driveRefs.length === 0) return [];
  const [link] = await db
    .select({ status: googleLinks.status })
    .from(googleLinks)
    .where(and(eq(googleLinks.accountId, accountId), eq(googleLinks.status, "active")));
  if (link) return [];
  return driveRefs.map((ref) => graphError(ref, "invalid_node_data", "Connect Google Drive in Settings before using a Drive file"));
}

/** OUTPUT `senderId`s that are not the account's senders (missing, deleted, or another account's: one answer). */
async function checkSenders(db: Db, accountId: string, input: unknown): Promise<GraphError[]> {
  const nodes = isRecord(input) && Array.isArray(input.nodes) ? input.nodes : [];
  const refs: (DataSourceRef & { senderId: string })[] = [];
  nodes.forEach((node: unknown, index) => {
    if (!isRecord(node) || node.type !== "OUTPUT" || !isRecord(node.data)) return;
    const { senderId } = node.data;
    if (typeof senderId !== "string" || senderId === "") return;
    refs.push({ nodeId: typeof node.id === "string" ? node.id : undefined, senderId, path: `graph.nodes[${index}].data.senderId` });
  });
  if (refs.length === 0) return [];
  const wanted = [...new Set(refs.map((ref) => ref.senderId).filter((id) => id.length <= MAX_ID_LENGTH))];
  const found = wanted.length
    ? await db.select({ id: senders.id }).from(senders).where(and(inArray(senders.id, wanted), eq(senders.accountId, accountId)))
    : [];
  const known = new Set(found.map((row) => row.id));
  return refs
    .filter((ref) => !known.has(ref.senderId))
    .map((ref) => graphError(ref, "invalid_node_data", `Sender ${shorten(ref.senderId)} does not exist (or was deleted): choose one in Settings → Senders`));
}

/** An AI node in batch mode needs a provider with a batch API (read only when a node asks for batch mode). */
async function checkBatchMode(db: Db, accountId: string, input: unknown): Promise<GraphError[]> {
  if (batchModeErrors(input, "openai-compatible").length === 0) return [];
  const [row] = await db.select({ provider: accounts.aiProvider }).from(accounts).where(eq(accounts.id, accountId));
  return batchModeErrors(input, row?.provider);
}

function graphError(ref: DataSourceRef, code: string, message: string): GraphError {
  return ref.nodeId === undefined ? { path: ref.path, code, message } : { path: ref.path, code, message, nodeId: ref.nodeId };
}

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
