import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb, type Db } from "@/db/client";
import type { RunMode, RunStatus, RunTrigger } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { accountForApiKey, isApiKeyToken, rememberedApiKey, touchLastUsed } from "@/lib/auth/api-keys";
import { apiKeyOpensAccount, apiKeyUseStale, tokenOpensAccount } from "@/lib/auth/account-check";
import { accountForAccessToken } from "@/lib/auth/authenticate";
import { verifyAccessToken } from "@/lib/auth/tokens";
import { wakeAfterResponse } from "../drivers/wake";
import { groupCommit } from "@/lib/group-commit";
import { assertScope } from "@/lib/http/authorize";
import { AppError, notFound } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { currentTraceparent } from "@/lib/observability/trace-context";
import {
  assertWithinLimit,
  consumeRateLimit,
  rateLimitHeaders,
  rateLimitResult,
  rateLimitSlice,
  settleCountedHits,
  type HitCount,
  type RateLimitResult,
  windowBeforeSlice,
} from "@/lib/rate-limit";

const A = sql.raw("a");
const K = sql.raw("k");

/** A new run is PENDING; a replayed Idempotency-Key answers the run's current status. */
export type EnqueuedRun = { runId: string; workflowId: string; status: RunStatus; enqueuedAt: string };

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** How the run starts; everything absent is a live, manual run of the whole graph. */
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
 * The hot path of `POST …/run` with a Bearer token and no Idempotency-Key: one statement counts the rate-limit hit,
 * checks the account (verified, token not revoked by a password change), snapshots the workflow and inserts the run,
 * instead of a rate-limit upsert, an account lookup and an insert (each statement costs the server's one thread a
 * socket write, a read and their parsing), and concurrent requests share one statement (group commit). Anything
 * unusual — a revoked token, the rate limit exceeded — goes through the full account lookup so that its answer
 * (401 before 429) stays exactly the general path's. The one difference: a revoked token's request counts one hit
 * against its account's limit.
 */
export async function enqueueRunWithToken(token: string, workflowId: string): Promise<{ run: EnqueuedRun; headers: Record<string, string> }> {
  if (isApiKeyToken(token)) return enqueueRunWithApiKey(token, workflowId);
  const claims = await verifyAccessToken(token);
  const id = newId("run");
  const row = await insertTokenRuns({ id, accountId: claims.accountId, issuedAtMs: claims.issuedAtMs, workflowId, limit: getConfig().runRateLimitPerMinute, traceparent: currentTraceparent() });
  const limit = row.limit;
  if (!limit.allowed) await accountForAccessToken(token); // 401 before 429; the refused hit was handed back with its batch
  assertWithinLimit(limit, `At most ${limit.limit} runs may be enqueued per minute: wait ${limit.resetSeconds} s and try again.`);
  let run: EnqueuedRun;
  if (!row.accountOk) {
    await accountForAccessToken(token); // throws the 401 that fits (unverified, revoked, gone)
    run = await insertSnapshot(await getDb(), claims.accountId, workflowId);
  } else if (row.enqueuedAt === null) {
    throw notFound("Workflow");
  } else {
    run = { runId: id, workflowId, status: "PENDING", enqueuedAt: new Date(row.enqueuedAt).toISOString() };
  }
  wake(workflowId);
  return { run, headers: rateLimitHeaders(limit) };
}

/**
 * The hot path with an API key: the key's fixed facts (account, scopes, workflows) come from this instance's memory
 * after its first use, so the request is the same one statement as with an access token, which also checks that the
 * key is still neither revoked nor expired. The key's scope and confinement are checked before anything is counted.
 */
async function enqueueRunWithApiKey(token: string, workflowId: string): Promise<{ run: EnqueuedRun; headers: Record<string, string> }> {
  let facts = rememberedApiKey(token);
  if (!facts) {
    const account = await accountForApiKey(token);
    facts = { accountId: account.id, grant: account.apiKey };
  }
  assertScope(facts.grant, "runs:write");
  if (facts.grant.workflowIds && !facts.grant.workflowIds.includes(workflowId)) throw notFound("Workflow");
  const id = newId("run");
  const limit = getConfig().runRateLimitPerMinute;
  const row = await insertTokenRuns({ id, accountId: facts.accountId, issuedAtMs: 0, keyId: facts.grant.id, workflowId, limit, traceparent: currentTraceparent() });
  if (!row.limit.allowed) await accountForApiKey(token); // 401 before 429
  assertWithinLimit(row.limit, `At most ${row.limit.limit} runs may be enqueued per minute: wait ${row.limit.resetSeconds} s and try again.`);
  let run: EnqueuedRun;
  if (!row.accountOk) {
    await accountForApiKey(token); // throws the 401 that fits (revoked, expired, account gone)
    run = await insertSnapshot(await getDb(), facts.accountId, workflowId);
  } else if (row.enqueuedAt === null) {
    throw notFound("Workflow");
  } else {
    run = { runId: id, workflowId, status: "PENDING", enqueuedAt: new Date(row.enqueuedAt).toISOString() };
  }
  if (row.keyStale) touchLastUsed(facts.grant.id);
  wake(workflowId);
  return { run, headers: rateLimitHeaders(row.limit) };
}

/** `keyId`: the request came with that API key (then `issuedAtMs` is unused, and the key's state is checked). */
type TokenInsert = { id: string; accountId: string; issuedAtMs: number; keyId?: string; workflowId: string; limit: number; traceparent: string | null };
type TokenInsertResult = { limit: RateLimitResult; accountOk: boolean; keyStale: boolean; enqueuedAt: string | Date | null };
type TokenInsertRow = {
  id: string;
  rank: number | string;
  earlier: number | string;
  oldest: number | string | null;
  slice_count: number | string;
  hits: number | string;
  account_ok: boolean;
  key_stale: boolean;
  enqueued_at: string | Date | null;
};

/**
 * The hot path's statement, group-committed: concurrent enqueues (any accounts, any workflows) go out as one statement
 * per round trip, gathered over a turn of the event loop. In it, per request in arrival order:
 * - the rate-limit hit, counted as `consumeRateLimit` counts it (lib/rate-limit.ts) at the statement's instant (one for
 *   the batch: all its hits fall in one slice): one upsert of each counter row for all its hits in the batch (rows
 *   taken in key order, so concurrent batches never deadlock), each hit ranked after the row's earlier count, plus
 *   the earlier slices still in the window;
 * - the account check of `authenticate` (for an API key: the key is still neither revoked nor expired);
 * - the run's insert with the workflow's snapshot, only for hits within the limit on accounts that pass. Rows are
 *   inserted in arrival order, so `seq` (the FIFO order) follows it within a batch.
 * Refused hits are handed back, and the slices a new slice pushed out of the window dropped (settleCountedHits), before
 * anyone is answered, as consumeRateLimit does (a failure there is logged, not answered: the batch's runs are in).
 */
const insertTokenRuns = groupCommit<TokenInsert, TokenInsertResult>(
  async (items) => {
    const db = await getDb();
    const now = Date.now();
    const slices = items.map((item) => rateLimitSlice(`run:${item.accountId}`, 60, now));
    const batch = JSON.stringify(
      items.map((item, ord) => ({
        id: item.id,
        account_id: item.accountId,
        iat_ms: item.issuedAtMs,
        key_id: item.keyId ?? null,
        workflow_id: item.workflowId,
        ord,
        rl_key: slices[ord].key,
        slice_start: slices[ord].sliceStart,
        first_counted: slices[ord].firstCounted,
        rl_limit: item.limit,
        traceparent: item.traceparent,
      })),
    );
    const rows = await execRows<TokenInsertRow>(
      db,
      sql`with req as (
            select * from jsonb_to_recordset(${batch}::jsonb)
              as r(id text, account_id text, iat_ms numeric, key_id text, workflow_id text, ord int, rl_key text, slice_start bigint, first_counted bigint, rl_limit int, traceparent text)
          ), hit as (
            insert into rate_limits (key, window_start, count)
            select rl_key, slice_start, count(*)::int from req group by rl_key, slice_start order by rl_key, slice_start
            on conflict (key, window_start) do update set count = rate_limits.count + excluded.count
            returning key, window_start, count
          ), ranked as (
            select req.*, hit.count as slice_count,
              count(*) over (partition by req.rl_key, req.slice_start) as hits,
              hit.count - count(*) over (partition by req.rl_key, req.slice_start)
                + row_number() over (partition by req.rl_key, req.slice_start order by req.ord) as rank,
              ${windowBeforeSlice(sql.raw("req.rl_key"), sql.raw("req.first_counted"), sql.raw("req.slice_start"))}
            from req join hit on hit.key = req.rl_key and hit.window_start = req.slice_start
          ), checked as (
            select ranked.*,
              coalesce(case when ranked.key_id is null
                then ${tokenOpensAccount(A, sql.raw("ranked.iat_ms"))}
                else ${apiKeyOpensAccount(A, K)} end, false) as account_ok,
              coalesce(${apiKeyUseStale(K)}, false) and k.id is not null as key_stale
            from ranked left join accounts a on a.id = ranked.account_id
              left join api_keys k on k.id = ranked.key_id and k.account_id = ranked.account_id
          ), ins as (
            insert into runs (id, workflow_id, account_id, workflow_version, graph, traceparent)
            select c.id, w.id, w.account_id, w.version, w.graph, c.traceparent
            from checked c join workflows w on w.id = c.workflow_id and w.account_id = c.account_id and w.deleted_at is null
            where c.account_ok and c.earlier + c.rank <= c.rl_limit
            order by c.ord
            for share of w
            returning id, enqueued_at
          )
          select c.id, c.rank, c.earlier, c.oldest, c.slice_count, c.hits, c.account_ok, c.key_stale, ins.enqueued_at
          from checked c left join ins on ins.id = c.id`,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const results: TokenInsertResult[] = [];
    const refunds = new Map<string, { key: string; sliceStart: number; hits: number }>();
    const opened = new Map<string, { key: string; firstCounted: number }>();
    for (const [ord, item] of items.entries()) {
      const row = byId.get(item.id);
      if (!row) throw new Error("enqueue: a request of the batch has no row");
      const slice = slices[ord];
      const hit: HitCount = { rank: Number(row.rank), earlier: Number(row.earlier), oldest: row.oldest === null ? null : Number(row.oldest) };
      const limit = rateLimitResult(slice, item.limit, hit, now);
      if (!limit.allowed) {
        const refund = refunds.get(slice.key) ?? { key: slice.key, sliceStart: slice.sliceStart, hits: 0 };
        refund.hits++;
        refunds.set(slice.key, refund);
      }
      // This batch's hits opened the slice: the key's slices that left the window go.
      if (Number(row.slice_count) === Number(row.hits)) opened.set(slice.key, { key: slice.key, firstCounted: slice.firstCounted });
      results.push({ limit, accountOk: row.account_ok === true, keyStale: row.key_stale === true, enqueuedAt: row.enqueued_at ?? null });
    }
    // The runs are in: a failure here must not turn their 202s into errors (a client would enqueue again). What it can
    // cost: a refused hit stays counted, or expired counter rows wait for the next new slice or the retention sweep.
    await settleCountedHits(db, [...refunds.values()], [...opened.values()]).catch((error: unknown) =>
      log.warn("rate-limit refund or cleanup after an enqueue batch failed", { error }),
    );
    return results;
  },
  500,
  { gatherTurn: true },
);

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
 * round trip on the hot path. Zero rows means no such workflow on this account. Every enqueue reads the workflow
 * row FOR SHARE, so a concurrent delete (which locks that row) and the enqueue are ordered: see deleteWorkflow.
 */
async function insertSnapshot(db: Db, accountId: string, workflowId: string, options: RunOptions = {}): Promise<EnqueuedRun> {
  const id = newId("run");
  const body = options.triggerBody === undefined ? null : JSON.stringify(options.triggerBody);
  const [row] = await execRows<{ enqueued_at: string | Date }>(
    db,
    sql`insert into runs (id, workflow_id, account_id, workflow_version, graph, trigger, mode, until_node_id, trigger_body, traceparent)
        select ${id}, w.id, w.account_id, w.version, w.graph, ${options.trigger ?? "manual"}, ${options.mode ?? "live"},
               ${options.untilNodeId ?? null}, ${body}::jsonb, ${currentTraceparent()}
        from workflows w
        where w.id = ${workflowId} and w.account_id = ${accountId} and w.deleted_at is null
        for share
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
    const outcome = await insertKeyedRun(db, accountId, workflowId, scope, key, options);
    if (outcome !== "race") return outcome;
  }
  throw new AppError("conflict", "Another request with the same Idempotency-Key is in progress: retry it.");
}

type KeyedRow = {
  existing_id: string | null;
  existing_workflow_id: string | null;
  existing_status: RunStatus | null;
  existing_enqueued_at: string | Date | null;
  workflow_found: boolean;
  enqueued_at: string | Date | null;
};

/**
 * A keyed enqueue in one statement (it was a transaction of five: BEGIN, the key's lookup, the run's insert, the key's
 * claim, COMMIT): the key's run within 24 h is answered (409 for another workflow); else the key is claimed and the
 * run inserted with the workflow's snapshot, both or neither (an expired key is replaced). A concurrent request with
 * the same key makes the claim do nothing once it commits, and with it the insert: "race", and the caller tries
 * again with a fresh snapshot, which sees that request's run.
 */
async function insertKeyedRun(
  db: Db,
  accountId: string,
  workflowId: string,
  scope: string,
  key: string,
  options: RunOptions,
): Promise<{ run: EnqueuedRun; created: boolean } | "race"> {
  const id = newId("run");
  const body = options.triggerBody === undefined ? null : JSON.stringify(options.triggerBody);
  const cutoff = new Date(Date.now() - IDEMPOTENCY_WINDOW_MS).toISOString();
  const [row] = await execRows<KeyedRow>(
    db,
    sql`with existing as (
          select r.id, r.workflow_id, r.status, r.enqueued_at
          from idempotency_keys k join runs r on r.id = k.resource_id
          where k.account_id = ${accountId} and k.scope = ${scope} and k.key = ${key} and k.created_at > ${cutoff}::timestamptz
        ), target as (
          select w.id, w.account_id, w.version, w.graph from workflows w
          where w.id = ${workflowId} and w.account_id = ${accountId} and w.deleted_at is null and not exists (select 1 from existing)
          for share of w
        ), claim as (
          insert into idempotency_keys (account_id, scope, key, resource_id)
          select ${accountId}, ${scope}, ${key}, ${id} from target
          on conflict (account_id, scope, key) do update set resource_id = excluded.resource_id, created_at = now()
            where idempotency_keys.created_at <= now() - interval '24 hours'
          returning resource_id
        ), ins as (
          insert into runs (id, workflow_id, account_id, workflow_version, graph, trigger, mode, until_node_id, trigger_body, traceparent)
          select ${id}, t.id, t.account_id, t.version, t.graph, ${options.trigger ?? "manual"}, ${options.mode ?? "live"},
                 ${options.untilNodeId ?? null}, ${body}::jsonb, ${currentTraceparent()}
          from target t join claim on true
          returning enqueued_at
        )
        select e.id as existing_id, e.workflow_id as existing_workflow_id, e.status as existing_status,
               e.enqueued_at as existing_enqueued_at, exists (select 1 from target) as workflow_found,
               (select enqueued_at from ins) as enqueued_at
        from (select 1) as one left join existing e on true`,
  );
  if (row.existing_id !== null) {
    if (row.existing_workflow_id !== workflowId) {
      throw new AppError("conflict", "This Idempotency-Key was already used to run another workflow: use a new key.");
    }
    const run = { runId: row.existing_id, workflowId, status: row.existing_status!, enqueuedAt: new Date(row.existing_enqueued_at!).toISOString() };
    return { run, created: false };
  }
  if (!row.workflow_found) throw notFound("Workflow");
  if (row.enqueued_at === null) return "race";
  return { run: { runId: id, workflowId, status: "PENDING", enqueuedAt: new Date(row.enqueued_at).toISOString() }, created: true };
}
