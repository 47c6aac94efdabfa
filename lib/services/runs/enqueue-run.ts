import "server-only";
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { getDb, type Db } from "@/db/client";
import { idempotencyKeys, runs, workflows, type RunStatus } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { wakeWorkflow } from "@/lib/engine/wake";
import { AppError, notFound } from "@/lib/http/errors";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { assertWithinLimit, consumeRateLimit, rateLimitHeaders } from "@/lib/rate-limit";

/** A new run is PENDING; a replayed Idempotency-Key answers the run's current status. */
export type EnqueuedRun = { runId: string; workflowId: string; status: RunStatus; enqueuedAt: string };

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

class IdempotencyRace extends Error {}

/**
 * Enqueues a run of the workflow as it is now (graph snapshot + version) and sends the wake-up. Never waits for
 * execution. The same Idempotency-Key within 24 h answers the run it created the first time.
 */
export async function enqueueRun(
  accountId: string,
  workflowId: string,
  idempotencyKey: string | undefined,
): Promise<{ run: EnqueuedRun; headers: Record<string, string> }> {
  const limit = await consumeRateLimit(`run:${accountId}`, getConfig().runRateLimitPerMinute, 60);
  assertWithinLimit(limit, `At most ${limit.limit} runs may be enqueued per minute: wait ${limit.resetSeconds} s and try again.`);
  const headers = rateLimitHeaders(limit);
  if (idempotencyKey !== undefined) validateKey(idempotencyKey);
  const db = await getDb();
  const [workflow] = await db
    .select({ id: workflows.id, graph: workflows.graph, version: workflows.version })
    .from(workflows)
    .where(and(eq(workflows.id, workflowId), eq(workflows.accountId, accountId), isNull(workflows.deletedAt)));
  if (!workflow) throw notFound("Workflow");
  const { run, created } = await insertRun(db, accountId, workflow, idempotencyKey);
  if (created) {
    await wakeWorkflow(workflowId).catch((error) => log.error("wake-up failed (the sweep will repair it)", { workflowId, error }));
  }
  return { run, headers };
}

function validateKey(key: string): void {
  if (key.length === 0 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new AppError("validation_failed", "The Idempotency-Key header must be 1–255 visible ASCII characters.", {
      errors: [{ path: "headers.idempotency-key", code: "invalid_idempotency_key", message: "1–255 visible ASCII characters" }],
    });
  }
}

async function insertRun(
  db: Db,
  accountId: string,
  workflow: { id: string; graph: unknown; version: number },
  key: string | undefined,
): Promise<{ run: EnqueuedRun; created: boolean }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        if (key !== undefined) {
          const existing = await findKeyedRun(tx as unknown as Db, accountId, key);
          if (existing && existing.workflowId !== workflow.id) {
            throw new AppError("conflict", "This Idempotency-Key was already used to run another workflow: use a new key.");
          }
          if (existing) return { run: existing, created: false };
        }
        const id = newId("run");
        const [row] = await tx
          .insert(runs)
          .values({ id, workflowId: workflow.id, accountId, workflowVersion: workflow.version, graph: workflow.graph })
          .returning({ enqueuedAt: runs.enqueuedAt });
        if (key !== undefined) {
          // An expired key is replaced; a concurrent request with the same key makes this insert do nothing.
          const claimed = await tx
            .insert(idempotencyKeys)
            .values({ accountId, scope: "run", key, resourceId: id })
            .onConflictDoUpdate({
              target: [idempotencyKeys.accountId, idempotencyKeys.scope, idempotencyKeys.key],
              set: { resourceId: id, createdAt: sql`now()` },
              setWhere: sql`${idempotencyKeys.createdAt} <= now() - interval '24 hours'`,
            })
            .returning({ resourceId: idempotencyKeys.resourceId });
          if (claimed.length === 0) throw new IdempotencyRace();
        }
        return { run: { runId: id, workflowId: workflow.id, status: "PENDING" as const, enqueuedAt: row.enqueuedAt.toISOString() }, created: true };
      });
    } catch (error) {
      if (!(error instanceof IdempotencyRace)) throw error;
    }
  }
  throw new AppError("conflict", "Another request with the same Idempotency-Key is in progress: retry it.");
}

async function findKeyedRun(db: Db, accountId: string, key: string): Promise<EnqueuedRun | undefined> {
  const [row] = await db
    .select({ runId: runs.id, workflowId: runs.workflowId, status: runs.status, enqueuedAt: runs.enqueuedAt })
    .from(idempotencyKeys)
    .innerJoin(runs, eq(runs.id, idempotencyKeys.resourceId))
    .where(
      and(
        eq(idempotencyKeys.accountId, accountId),
        eq(idempotencyKeys.scope, "run"),
        eq(idempotencyKeys.key, key),
        gt(idempotencyKeys.createdAt, new Date(Date.now() - IDEMPOTENCY_WINDOW_MS)),
      ),
    );
  return row ? { runId: row.runId, workflowId: row.workflowId, status: row.status, enqueuedAt: row.enqueuedAt.toISOString() } : undefined;
}
