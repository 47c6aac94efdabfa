import "server-only";
import { sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { log } from "@/lib/log";

/**
 * Wake-ups between processes on one PostgreSQL: a web process that executes no runs (EXECUTOR=off) tells the worker
 * processes which workflow has a new run with NOTIFY; each worker LISTENs and pokes its executor, and the claim in the
 * database decides which one runs it. A lost notification only delays a run until a worker's sweep finds it.
 */
const WAKE_CHANNEL = "flowmail_wake";

/** Workflow ids per notification (a payload holds at most 8,000 bytes). */
const IDS_PER_NOTIFY = 200;

let pending = new Set<string>();
let flushing = false;

/** Sends the wake-up for the workflow to every listening worker; wake-ups of one event-loop turn share a NOTIFY. */
export function notifyWake(workflowId: string): void {
  pending.add(workflowId);
  if (flushing) return;
  flushing = true;
  setImmediate(() => void flush());
}

async function flush(): Promise<void> {
  const ids = [...pending];
  pending = new Set();
  flushing = false;
  try {
    const db = await getDb();
    for (let i = 0; i < ids.length; i += IDS_PER_NOTIFY) {
      await db.execute(sql`select pg_notify(${WAKE_CHANNEL}, ${ids.slice(i, i + IDS_PER_NOTIFY).join(",")})`);
    }
  } catch (error) {
    log.warn("could not notify the workers of new runs (their sweep will find them)", { error });
  }
}

/**
 * LISTENs on the wake channel on a connection of its own (postgres.js listens again after a reconnect) and calls
 * `onWake` for each workflow named. Returns the function that stops listening.
 */
export async function listenForWakes(url: string, onWake: (workflowId: string) => void): Promise<() => Promise<void>> {
  const { default: postgres } = await import("postgres");
  const client = postgres(url, { max: 1, onnotice: () => {}, idle_timeout: 0 });
  await client.listen(WAKE_CHANNEL, (payload) => {
    for (const id of payload.split(",")) if (id) onWake(id);
  });
  return () => client.end({ timeout: 5 });
}
