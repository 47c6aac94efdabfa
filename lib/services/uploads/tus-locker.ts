import "server-only";
import { randomBytes } from "node:crypto";
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { ERRORS, type Lock, type Locker, type RequestRelease } from "@tus/utils";
import { getDb } from "@/db/client";
import { tusUploads } from "@/db/schema";
import { log } from "@/lib/log";

/** A lease outlives a crashed instance by at most this long; a live holder renews it well before. */
export const LEASE_MS = 30_000;
const RENEW_MS = 10_000;
const POLL_MS = 50;
/** How long a request waits for another instance's lease before answering 423 (tus-js-client retries 423). */
const ACQUIRE_TIMEOUT_MS = 20_000;

export const UPLOAD_LOCKED = { status_code: 423, body: "This upload is being written by another request: retry in a moment." };

type Holder = { requestRelease: RequestRelease; released: Promise<void>; release: () => void };

/**
 * One lock per tus upload, in two layers:
 * - in this process, a holder map: a newcomer asks the holder to let go (tus's requestRelease: the holder is a stale
 *   PATCH whose client already gave up) and waits for it without spinning;
 * - across instances, a lease in the upload's own row (`lock_token`, `lock_expires_at`), taken with one conditional
 *   UPDATE and renewed while held. A lease rather than an advisory lock: it holds no connection while a slow client
 *   sends its 4 MiB (a pool of 10 would otherwise deadlock at 10 concurrent uploads), it works the same on PGlite,
 *   and an instance that dies mid-request frees it by expiry.
 * The store's offset compare-and-set is the last line: even a lost lease can never store bytes twice.
 */
export class LeaseLocker implements Locker {
  readonly holders = new Map<string, Holder>();

  newLock(id: string): Lock {
    return new LeaseLock(id, this);
  }
}

class LeaseLock implements Lock {
  private readonly token = randomBytes(12).toString("base64url");
  private renewTimer: NodeJS.Timeout | undefined;

  constructor(private readonly id: string, private readonly locker: LeaseLocker) {}

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const deadline = Date.now() + ACQUIRE_TIMEOUT_MS;
    await this.lockInProcess(signal, requestRelease, deadline);
    try {
      await this.takeLease(signal, deadline);
    } catch (error) {
      this.releaseInProcess();
      throw error;
    }
  }

  async unlock(): Promise<void> {
    clearInterval(this.renewTimer);
    try {
      const db = await getDb();
      await db
        .update(tusUploads)
        .set({ lockToken: null, lockExpiresAt: null })
        .where(and(eq(tusUploads.id, this.id), eq(tusUploads.lockToken, this.token)));
    } finally {
      this.releaseInProcess();
    }
  }

  private async lockInProcess(signal: AbortSignal, requestRelease: RequestRelease, deadline: number) {
    for (;;) {
      const holder = this.locker.holders.get(this.id);
      if (!holder) break;
      await holder.requestRelease();
      await waitFor(holder.released, signal, deadline);
    }
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    this.locker.holders.set(this.id, { requestRelease, released, release });
  }

  private releaseInProcess() {
    const holder = this.locker.holders.get(this.id);
    this.locker.holders.delete(this.id);
    holder?.release();
  }

  private async takeLease(signal: AbortSignal, deadline: number) {
    const db = await getDb();
    const free = or(isNull(tusUploads.lockToken), lt(tusUploads.lockExpiresAt, sql`now()`));
    for (;;) {
      const taken = await db
        .update(tusUploads)
        .set({ lockToken: this.token, lockExpiresAt: sql`now() + ${`${LEASE_MS} milliseconds`}::interval` })
        .where(and(eq(tusUploads.id, this.id), free))
        .returning({ id: tusUploads.id });
      if (taken.length > 0) break;
      const [exists] = await db.select({ id: tusUploads.id }).from(tusUploads).where(eq(tusUploads.id, this.id));
      // No row yet (a POST creating it) or none at all (the handler then answers 404): nothing to guard.
      if (!exists) return;
      await waitFor(sleep(POLL_MS), signal, deadline);
    }
    this.renewTimer = setInterval(() => void this.renew(), RENEW_MS);
    this.renewTimer.unref();
  }

  private async renew() {
    try {
      const db = await getDb();
      await db
        .update(tusUploads)
        .set({ lockExpiresAt: sql`now() + ${`${LEASE_MS} milliseconds`}::interval` })
        .where(and(eq(tusUploads.id, this.id), eq(tusUploads.lockToken, this.token)));
    } catch (error) {
      log.warn("tus lease renewal failed", { tusUploadId: this.id, error });
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits for `promise`; a cancelled request stops waiting (ABORTED) and a wait past the deadline answers 423. */
async function waitFor(promise: Promise<void>, signal: AbortSignal, deadline: number): Promise<void> {
  if (signal.aborted) throw ERRORS.ABORTED;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(UPLOAD_LOCKED), Math.max(0, deadline - Date.now()));
        onAbort = () => reject(ERRORS.ABORTED);
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

const globalForLocker = globalThis as unknown as { __flowmailTusLocker?: LeaseLocker };

/** The process-wide locker (on globalThis so dev-server reloads keep one holder map). */
export function tusLocker(): LeaseLocker {
  return (globalForLocker.__flowmailTusLocker ??= new LeaseLocker());
}
