import "server-only";
import { and, eq, isNull, sql } from "drizzle-orm";
import { getDb, type Db } from "@/db/client";
import { hookDeliveries, inboundHooks, workflows } from "@/db/schema";
import { AppError, notFound } from "@/lib/errors";
import { MAX_JSON_BYTES, readJsonBody } from "@/lib/http/route";
import { log } from "@/lib/log";
import { enqueueRun } from "@/lib/engine";
import { hashHookToken, looksLikeHookToken } from "./hook-token";

/** Deliveries kept per hook: a few more than the editor shows. */
const DELIVERIES_KEPT = 50;

/** PostgreSQL's jsonb parser recurses: a 1 MiB body of nested brackets would hit its stack limit (a 500), so refuse it. */
export const MAX_BODY_DEPTH = 100;

type Delivery = { status: number; runId?: string; code?: string; idempotencyKey?: string; sizeBytes: number };

/**
 * POST /api/hooks/:token: any JSON value (≤ 1 MiB) starts a run whose TRIGGER outputs `{ body }`.
 * The token is the only credential. Rate limited with the account's enqueue limit; an `Idempotency-Key` or
 * `webhook-id` header seen on this hook within 24 h answers the run of the first delivery (senders retry), in a key
 * scope of its own (`hook:<hookId>`) so it never collides with POST …/run keys. Every delivery to a known hook,
 * refused or not, is recorded for the editor's "last deliveries".
 */
export async function receiveHookDelivery(token: string, req: Request): Promise<{ runId: string; headers: Record<string, string> }> {
  if (!looksLikeHookToken(token)) throw notFound("Hook");
  const db = await getDb();
  const [hook] = await db
    .select({ id: inboundHooks.id, workflowId: inboundHooks.workflowId, accountId: inboundHooks.accountId })
    .from(inboundHooks)
    .innerJoin(workflows, and(eq(workflows.id, inboundHooks.workflowId), isNull(workflows.deletedAt)))
    .where(eq(inboundHooks.tokenHash, hashHookToken(token)));
  if (!hook) throw notFound("Hook");
  const idempotencyKey = req.headers.get("idempotency-key") ?? req.headers.get("webhook-id") ?? undefined;
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  let sizeBytes = Number.isFinite(declared) ? declared : 0;
  try {
    const body = await readJsonBody(req, MAX_JSON_BYTES);
    assertDepth(body);
    if (!Number.isFinite(declared)) sizeBytes = Buffer.byteLength(JSON.stringify(body));
    const { run, headers } = await enqueueRun(hook.accountId, hook.workflowId, idempotencyKey, {
      trigger: "hook",
      triggerBody: body,
      idempotencyScope: `hook:${hook.id}`,
    });
    await recordDelivery(db, hook.id, { status: 202, runId: run.runId, idempotencyKey, sizeBytes });
    return { runId: run.runId, headers };
  } catch (error) {
    if (error instanceof AppError) await recordDelivery(db, hook.id, { status: error.status, code: error.code, idempotencyKey, sizeBytes });
    throw error;
  }
}

/** Iterative (the body may nest far deeper than the call stack allows). */
function assertDepth(root: unknown): void {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (depth > MAX_BODY_DEPTH) {
      throw new AppError("validation_failed", `The JSON body nests deeper than ${MAX_BODY_DEPTH} levels of arrays and objects.`, {
        errors: [{ path: "body", code: "too_deep", message: `at most ${MAX_BODY_DEPTH} levels` }],
      });
    }
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
}

/** Best effort: a delivery that could not be recorded still gets its answer. */
async function recordDelivery(db: Db, hookId: string, delivery: Delivery): Promise<void> {
  try {
    await db.insert(hookDeliveries).values({
      hookId,
      status: delivery.status,
      runId: delivery.runId ?? null,
      code: delivery.code ?? null,
      // A key is at most 255 visible characters when accepted; a refused one is cut for display.
      idempotencyKey: delivery.idempotencyKey?.slice(0, 255).replace(/[^\x20-\x7e]/g, "?") ?? null,
      sizeBytes: Math.max(0, Math.min(delivery.sizeBytes, 2_147_483_647)),
    });
    await db.execute(
      sql`delete from hook_deliveries where hook_id = ${hookId} and id < (
            select id from hook_deliveries where hook_id = ${hookId} order by id desc offset ${DELIVERIES_KEPT - 1} limit 1)`,
    );
  } catch (error) {
    log.warn("hook delivery not recorded", { hookId, error });
  }
}
