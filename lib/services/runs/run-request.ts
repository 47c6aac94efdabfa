import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { workflows } from "@/db/schema";
import { AppError, notFound } from "@/lib/errors";
import { MAX_JSON_BYTES, readJsonBody, readTextLimited } from "@/lib/http/route";
import { zodErrorItems } from "@/lib/http/problem";
import { runRequestBody } from "@/lib/schemas/sending";
import type { RunOptions } from "@/lib/engine";

/** Items asked per AI node by an estimate when the request names no `sample`. */
const DEFAULT_ESTIMATE_SAMPLE = 3;

/**
 * Whether `POST …/run` carries a body. No body (the hot path: nothing is read) or an empty one is a live run, as before
 * part two; a body must be JSON `{ mode?, until? }`.
 */
export function hasRunBody(req: Request): boolean {
  const length = req.headers.get("content-length");
  if (length !== null) return Number(length) > 0;
  return req.headers.has("content-type") || req.headers.has("transfer-encoding");
}

/** The run's options from a JSON body; undefined for an empty body. */
export async function readRunRequest(req: Request): Promise<RunOptions | undefined> {
  // Read once (never a clone: cancelling one branch of a tee'd body waits for the other, which nobody reads).
  const text = await readTextLimited(req, MAX_JSON_BYTES);
  // An empty body (some clients send `Content-Type: application/json` with nothing) is the plain live run.
  if (text.trim() === "") return undefined;
  const again = new Request(req.url, { method: "POST", headers: req.headers, body: text });
  const parsed = runRequestBody.safeParse(await readJsonBody(again, MAX_JSON_BYTES));
  if (!parsed.success) {
    throw new AppError("validation_failed", "The request is not valid: see `errors`.", { errors: zodErrorItems(parsed.error, []) });
  }
  const { mode, until, sample } = parsed.data;
  if (sample !== undefined && mode !== "estimate") {
    throw new AppError("validation_failed", "`sample` sizes an estimate: add \"mode\": \"estimate\".", {
      errors: [{ path: "sample", code: "sample_requires_estimate", message: "Only with mode \"estimate\"" }],
    });
  }
  // A manual run has no hook body: an estimate's sample size travels there (the TRIGGER shows a body only for hooks).
  if (mode === "estimate") return { mode, triggerBody: { estimateSample: sample ?? DEFAULT_ESTIMATE_SAMPLE } };
  if (until !== undefined && mode !== "preview") {
    throw new AppError("validation_failed", "`until` runs part of the graph, which only a preview may do: add \"mode\": \"preview\".", {
      errors: [{ path: "until", code: "until_requires_preview", message: "Only with mode \"preview\"" }],
    });
  }
  return { mode, ...(until !== undefined ? { untilNodeId: until } : {}) };
}

/** A preview `until` must name a node of the workflow (checked against the graph the run will snapshot). */
export async function assertUntilNode(accountId: string, workflowId: string, options: RunOptions): Promise<void> {
  if (options.untilNodeId === undefined) return;
  const db = await getDb();
  const [workflow] = await db.select({ graph: workflows.graph }).from(workflows)
    .where(and(eq(workflows.id, workflowId), eq(workflows.accountId, accountId), isNull(workflows.deletedAt)));
  if (!workflow) throw notFound("Workflow");
  const nodes = (workflow.graph as { nodes?: { id?: unknown }[] }).nodes ?? [];
  if (!nodes.some((n) => n.id === options.untilNodeId)) {
    throw new AppError("validation_failed", `\`until\` names node "${options.untilNodeId}", which is not in this workflow.`, {
      errors: [{ path: "until", code: "unknown_node", message: "Not a node of this workflow" }],
    });
  }
}
