import "server-only";
import type { Sql } from "postgres";
import { log } from "@/lib/log";

/**
 * Liveness of executor processes on PostgreSQL.
 *
 * Each process executing runs holds one session-level advisory lock, (EXECUTOR_LOCK_CLASS, its key), on a connection
 * of its own, and writes its key into `runs.executor_key` when it claims or takes over a run. PostgreSQL releases a
 * session lock the moment the session ends: a killed process's socket is closed by the kernel, so its lock is gone at
 * once, and any other process's next sweep (every few seconds) sees RUNNING runs whose key no session holds and takes
 * them over — no 60 s heartbeat window. A restarted process gets a new key, so it takes over its own former runs on
 * its first sweep. The heartbeat stays as the backstop for a process that is alive but stuck, and for a host that
 * vanished without closing its sockets (the session's TCP keepalives below bound that to ~20 s).
 *
 * Connection poolers in transaction mode (PgBouncer, Supavisor :6543) cannot keep a session lock: point DATABASE_URL
 * at a session-mode or direct address for the embedded executor.
 */
const EXECUTOR_LOCK_CLASS = 1181511543; // "Flow" as a big-endian int4

type LockState = { sql: Sql; key: number; url: string };

const globalForLock = globalThis as unknown as { __flowmailExecutorLock?: LockState };

/** This process's executor key, or null (PGlite: one process; Inngest: Inngest retries the steps of a dead worker). */
export function executorKey(): number | null {
  return globalForLock.__flowmailExecutorLock?.key ?? null;
}

/** Opens the dedicated session and takes a fresh key (a random positive int4 that no live session holds). */
export async function acquireExecutorLock(url: string): Promise<number> {
  if (globalForLock.__flowmailExecutorLock) return globalForLock.__flowmailExecutorLock.key;
  const { default: postgres } = await import("postgres");
  const sql = postgres(url, {
    max: 1,
    idle_timeout: 0,
    max_lifetime: 0, // the default recycles connections every 30–60 min, which would drop the lock
    keep_alive: 10,
    onnotice: () => {},
    connection: {
      application_name: "flowmail-executor-lock",
      // The server notices a vanished host (no FIN) after ~10 + 2 × 5 s instead of its 2 h default.
      tcp_keepalives_idle: 10,
      tcp_keepalives_interval: 5,
      tcp_keepalives_count: 2,
    } as Record<string, number | string>,
  });
  for (let attempt = 0; attempt < 20; attempt++) {
    const key = 1 + Math.floor(Math.random() * 2_147_483_646);
    const [row] = await sql<{ ok: boolean }[]>`select pg_try_advisory_lock(${EXECUTOR_LOCK_CLASS}::int4, ${key}::int4) as ok`;
    if (row?.ok) {
      globalForLock.__flowmailExecutorLock = { sql, key, url };
      return key;
    }
  }
  await sql.end({ timeout: 1 });
  throw new Error("Could not take an executor lock key (20 tries)");
}

/**
 * Called by every sweep: re-takes the same key when the lock's session was lost (a database restart). Meanwhile other
 * processes may have taken this process's runs over; the heartbeat's ownership check then stops them here.
 */
export async function ensureExecutorLock(): Promise<void> {
  const state = globalForLock.__flowmailExecutorLock;
  if (!state) return;
  try {
    const [row] = await state.sql<{ held: boolean }[]>`
      select exists (select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()
                     and classid = ${EXECUTOR_LOCK_CLASS}::oid and objid = ${state.key}::int4::oid and objsubid = 2) as held`;
    if (row?.held) return;
    const [again] = await state.sql<{ ok: boolean }[]>`select pg_try_advisory_lock(${EXECUTOR_LOCK_CLASS}::int4, ${state.key}::int4) as ok`;
    log.warn("executor lock session was lost: lock re-taken", { key: state.key, ok: again?.ok === true });
  } catch (error) {
    log.warn("executor lock check failed (database unavailable?)", { error });
  }
}

/** Ends the session (SIGTERM hand-back, tests): the lock goes with it. */
export async function releaseExecutorLock(): Promise<void> {
  const state = globalForLock.__flowmailExecutorLock;
  globalForLock.__flowmailExecutorLock = undefined;
  await state?.sql.end({ timeout: 2 }).catch(() => {});
}

/**
 * SQL (a condition on `runs` aliased as `r`) true when the run's executor session is gone: its key is set and no
 * session of this database holds that lock.
 */
export const EXECUTOR_GONE = `(r.executor_key is not null and not exists (
  select 1 from pg_locks l
  where l.locktype = 'advisory' and l.granted and l.classid = ${EXECUTOR_LOCK_CLASS}::oid
    and l.objid = r.executor_key::oid and l.objsubid = 2
    and l.database = (select oid from pg_database where datname = current_database())))`;
