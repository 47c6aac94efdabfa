import "server-only";
import { and, eq, gt, sql } from "drizzle-orm";
import { execRows, getDb, type Db } from "@/db/client";
import { idempotencyKeys, runs, type RunMode, type RunStatus, type RunTrigger } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { accountForAccessToken } from "@/lib/auth/authenticate";
import { verifyAccessToken } from "@/lib/auth/tokens";
import { wakeAfterResponse } from "@/lib/engine/wake";
import { groupCommit } from "@/lib/group-commit";
import { AppError, notFound } from "@/lib/http/errors";
import { newId } from "@/lib/ids";
import { assertWithinLimit, consumeRateLimit, rateLimitHeaders } from "@/lib/rate-limit";

/** A new run is PENDING; a replayed Idempotency-Key answers the run's current status. */
export type EnqueuedRun = { runId: string; workflowId: string; status: RunStatus; enqueuedAt: string };

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** How the run starts (CONTRACT 11–13); everything absent is a live, manual run of the whole graph. */
export type RunOptions = {
  trigger?: RunTrigger;
  mode?: RunMode;
  /** Preview `until`: only this node and its ancestors execute. */
  untilNodeId?: string;
  /** An inbound hook's JSON body (the TRIGGER's output becomes `{ body }`). */
  triggerBody?: unknown;
  /** Idempotency keys of different senders never collide: "run" for POST …/run, e.g. "hook:<hookId>" for hooks. */
  idempotencyScope?: string;
};

class IdempotencyRace extends Error {}

/**
 * Enqueues a run of the workflow as it is now (graph snapshot + version) and sends the wake-up. Never waits for
 * execution. The same Idempotency-Key within 24 h answers the run it created the first time.
 */
export async function enqueueRun(
  accountId: string,
  workflowId: string,
  idempotencyKey: string | undefined,
  options: RunOptions = {},
): Promise<{ run: EnqueuedRun; headers: Record<string, string> }> {
  const limit = await consumeRateLimit(`run:${accountId}`, getConfig().runRateLimitPerMinute, 60);
  assertWithinLimit(limit, `At most ${limit.limit} runs may be enqueued per minute: wait ${limit.resetSeconds} s and try again.`);
  const headers = rateLimitHeaders(limit);
  if (idempotencyKey !== undefined) validateKey(idempotencyKey);
  const db = await getDb();
  const { run, created } = await insertRun(db, accountId, workflowId, idempotencyKey, options);
  if (created) wake(workflowId);
  return { run, headers };
}

/**
 * The hot path of `POST …/run` with a Bearer token and no Idempotency-Key: one statement checks the account (verified,
 * token not revoked by a password change), snapshots the workflow and inserts the run, instead of an account lookup
 * plus an insert (each statement costs ~0.5 ms of shared CPU on a busy server), and concurrent requests share one
 * statement (group commit). Anything unusual — a revoked token,
 * the rate limit exceeded — goes through the full account lookup so that its answer (401 before 429) stays exactly
 * the general path's. The one difference: a revoked token's request counts one hit against its account's limit.
 */
export async function enqueueRunWithToken(token: string, workflowId: string): Promise<{ run: EnqueuedRun; headers: Record<string, string> }> {
  const claims = await verifyAccessToken(token);
  const limit = await consumeRateLimit(`run:${claims.accountId}`, getConfig().runRateLimitPerMinute, 60);
  if (!limit.allowed) await accountForAccessToken(token);
  assertWithinLimit(limit, `At most ${limit.limit} runs may be enqueued per minute: wait ${limit.resetSeconds} s and try again.`);
  let run = await insertSnapshotForToken(claims.accountId, claims.issuedAtMs, workflowId);
  if (!run) {
    await accountForAccessToken(token); // throws the 401 that fits (unverified, revoked, gone)
    run = await insertSnapshot(await getDb(), claims.accountId, workflowId);
  }
  wake(workflowId);
  return { run, headers: rateLimitHeaders(limit) };
}

type TokenInsert = { id: string; accountId: string; issuedAtMs: number; workflowId: string };
type TokenInsertResult = { accountOk: boolean; enqueuedAt: string | Date | null };

/**
 * The hot path's statement, group-committed: concurrent enqueues (any accounts, any workflows) go out as one INSERT …
 * SELECT per round trip. Rows are inserted in arrival order, so `seq` (the FIFO order) follows it within a batch.
 */
const insertTokenRuns = groupCommit<TokenInsert, TokenInsertResult>(async (items) => {
  const db = await getDb();
  const batch = JSON.stringify(items.map((item, ord) => ({ id: item.id, account_id: item.accountId, iat_ms: item.issuedAtMs, workflow_id: item.workflowId, ord })));
  const rows = await execRows<{ id: string; account_ok: boolean; enqueued_at: string | Date | null }>(
    db,
    sql`with req as (
          select * from jsonb_to_recordset(${batch}::jsonb) as r(id text, account_id text, iat_ms numeric, workflow_id text, ord int)
        ), ok as (
          select req.* from req join accounts a on a.id = req.account_id
          where a.email_verified_at is not null
            and (a.password_changed_at is null or floor(extract(epoch from a.password_changed_at) * 1000) < req.iat_ms)
        ), ins as (
          insert into runs (id, workflow_id, account_id, workflow_version, graph)
          select ok.id, w.id, w.account_id, w.version, w.graph
          from ok join workflows w on w.id = ok.workflow_id and w.account_id = ok.account_id and w.deleted_at is null
          order by ok.ord
          returning id, enqueued_at
        )
        select req.id, ok.id is not null as account_ok, ins.enqueued_at
        from req left join ok on ok.id = req.id left join ins on ins.id = req.id`,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return items.map((item) => {
    const row = byId.get(item.id);
    return { accountOk: row?.account_ok === true, enqueuedAt: row?.enqueued_at ?? null };
  });
});

/** `insertSnapshot` guarded by the account check of `authenticate`; undefined when the account check fails. */
async function insertSnapshotForToken(accountId: string, issuedAtMs: number, workflowId: string): Promise<EnqueuedRun | undefined> {
  const id = newId("run");
  const row = await insertTokenRuns({ id, accountId, issuedAtMs, workflowId });
  if (!row.accountOk) return undefined;
  if (!row.enqueuedAt) throw notFound("Workflow");
  return { runId: id, workflowId, status: "PENDING", enqueuedAt: new Date(row.enqueuedAt).toISOString() };
}

/**
 * Not awaited: the embedded executor is poked synchronously inside the call, and an Inngest event send (a network
 * round trip) must not hold the 202, so it runs in `after()`; a lost wake-up only delays the run until the sweep.
 */
function wake(workflowId: string): void {
  wakeAfterResponse(workflowId);
}

function validateKey(key: string): void {
  if (key.length === 0 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new AppError("validation_failed", "The Idempotency-Key header must be 1–255 visible ASCII characters.", {
      errors: [{ path: "headers.idempotency-key", code: "invalid_idempotency_key", message: "1–255 visible ASCII characters" }],
    });
  }
}

/**
 * Snapshots the workflow into a new run in one statement (INSERT … SELECT): no read-then-write window, and one
 * round trip on the hot path. Zero rows means no such workflow on this account.
 */
async function insertSnapshot(db: Db, accountId: string, workflowId: string, options: RunOptions = {}): Promise<EnqueuedRun> {
  const id = newId("run");
  const body = options.triggerBody === undefined ? null : JSON.stringify(options.triggerBody);
  const [row] = await execRows<{ enqueued_at: string | Date }>(
    db,
    sql`insert into runs (id, workflow_id, account_id, workflow_version, graph, trigger, mode, until_node_id, trigger_body)
        select ${id}, w.id, w.account_id, w.version, w.graph, ${options.trigger ?? "manual"}, ${options.mode ?? "live"},
               ${options.untilNodeId ?? null}, ${body}::jsonb
        from workflows w
        where w.id = ${workflowId} and w.account_id = ${accountId} and w.deleted_at is null
        returning enqueued_at`,
  );
  if (!row) throw notFound("Workflow");
  return { runId: id, workflowId, status: "PENDING", enqueuedAt: new Date(row.enqueued_at).toISOString() };
}

async function insertRun(
  db: Db,
  accountId: string,
  workflowId: string,
  key: string | undefined,
  options: RunOptions,
): Promise<{ run: EnqueuedRun; created: boolean }> {
  if (key === undefined) return { run: await insertSnapshot(db, accountId, workflowId, options), created: true };
  const scope = options.idempotencyScope ?? "run";
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await db.transaction(async (txn) => {
        const tx = txn as unknown as Db;
        const existing = await findKeyedRun(tx, accountId, scope, key);
        if (existing && existing.workflowId !== workflowId) {
          throw new AppError("conflict", "This Idempotency-Key was already used to run another workflow: use a new key.");
        }
        if (existing) return { run: existing, created: false };
        const run = await insertSnapshot(tx, accountId, workflowId, options);
        // An expired key is replaced; a concurrent request with the same key makes this insert do nothing.
        const claimed = await tx
          .insert(idempotencyKeys)
          .values({ accountId, scope, key, resourceId: run.runId })
          .onConflictDoUpdate({
            target: [idempotencyKeys.accountId, idempotencyKeys.scope, idempotencyKeys.key],
            set: { resourceId: run.runId, createdAt: sql`now()` },
            setWhere: sql`${idempotencyKeys.createdAt} <= now() - interval '24 hours'`,
          })
          .returning({ resourceId: idempotencyKeys.resourceId });
        if (claimed.length === 0) throw new IdempotencyRace();
        return { run, created: true };
      });
    } catch (error) {
      if (!(error instanceof IdempotencyRace)) throw error;
    }
  }
  throw new AppError("conflict", "Another request with the same Idempotency-Key is in progress: retry it.");
}

async function findKeyedRun(db: Db, accountId: string, scope: string, key: string): Promise<EnqueuedRun | undefined> {
  const [row] = await db
    .select({ runId: runs.id, workflowId: runs.workflowId, status: runs.status, enqueuedAt: runs.enqueuedAt })
    .from(idempotencyKeys)
    .innerJoin(runs, eq(runs.id, idempotencyKeys.resourceId))
    .where(
      and(
        eq(idempotencyKeys.accountId, accountId),
        eq(idempotencyKeys.scope, scope),
        eq(idempotencyKeys.key, key),
        gt(idempotencyKeys.createdAt, new Date(Date.now() - IDEMPOTENCY_WINDOW_MS)),
      ),
    );
  return row ? { runId: row.runId, workflowId: row.workflowId, status: row.status, enqueuedAt: row.enqueuedAt.toISOString() } : undefined;
}
