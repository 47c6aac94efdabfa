import "server-only";
import { and, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { nodeResults } from "@/db/schema";
import { AppError, notFound } from "@/lib/http/errors";
import { findAccountRun } from "./get-run";

/**
 * GET /api/workflows/runs/:runId/nodes/:nodeId/output — a page of an array in the node's output. `field` is a dot
 * path (`items`, `rows`, `summary.list`); without it, the output's only top-level array.
 */
export async function getNodeOutputPage(
  accountId: string,
  runId: string,
  nodeId: string,
  query: { field?: string; offset: number; limit: number },
): Promise<{ items: unknown[]; total: number }> {
  await findAccountRun(accountId, runId);
  const db = await getDb();
  const [row] = await db
    .select({ status: nodeResults.status, output: nodeResults.output })
    .from(nodeResults)
    .where(and(eq(nodeResults.runId, runId), eq(nodeResults.nodeId, nodeId)));
  if (!row) throw notFound("Node");
  const output = row.status === "SUCCESS" ? row.output ?? {} : {};
  const array = pickArray(output, query.field);
  return { items: array.slice(query.offset, query.offset + query.limit), total: array.length };
}

function pickArray(output: Record<string, unknown>, field: string | undefined): unknown[] {
  if (field === undefined) {
    const arrays = Object.entries(output).filter(([, v]) => Array.isArray(v));
    if (arrays.length === 1) return arrays[0][1] as unknown[];
    if (arrays.length === 0) return [];
    throw invalidField(`This output holds several arrays (${arrays.map(([k]) => k).join(", ")}): choose one with ?field=.`);
  }
  let value: unknown = output;
  for (const part of field.split(".")) {
    if (value === null || typeof value !== "object" || !Object.prototype.hasOwnProperty.call(value, part)) {
      throw invalidField(`The output has no field "${field}".`);
    }
    value = (value as Record<string, unknown>)[part];
  }
  if (!Array.isArray(value)) throw invalidField(`The output field "${field}" is not an array.`);
  return value;
}

function invalidField(detail: string) {
  return new AppError("validation_failed", detail, { errors: [{ path: "query.field", code: "invalid_field", message: detail }] });
}
