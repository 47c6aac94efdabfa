import "server-only";
import { waitUnlessStopped } from "@/lib/email/pacing";
import { EmailSendError, type OutgoingEmail } from "@/lib/email/types";
import type { LedgerKey, ResolvedSender } from "../ports";
import { NodeError, type NodeRuntime } from "../types";
import { retryPolicy, type SendContext } from "./send-with-retry";

/**
 * Sending through a transport without an idempotency key (SMTP, SES): one provider call per email, each paced on the
 * sender's shared limiter, each recorded `sending` before its call and `sent` after — so that a crash while calls are
 * under way leaves those emails `sending`, which the next attempt turns `unknown` instead of sending them twice.
 *
 * The batch goes in groups (about a fifth of a second of the sender's rate, 1–10 emails): one statement marks a
 * group `sending`, one takes its send slots, its emails go at their slots (concurrently, through the transport's
 * connection pool), one statement marks what came back. At most two groups are under way, so the next group's
 * statements overlap the current group's calls; and at most SENDING_PER_SENDER emails of a sender are `sending` in a
 * process at once, across its runs and batch lanes.
 *
 * Answers per email: throttling (SMTP 421/45x, SES Throttling) and connection failures hold the sender's limiter and
 * are tried again while the send budget lasts — never dropped; a permanent refusal of the email marks it `failed`
 * with the provider's sentence and the rest go on; a refusal of the sender itself, a quota, or a spent budget stops
 * the batch: emails not yet called go back to pending, and the node fails.
 */

export type EachEmail = { itemIndex: number; email: OutgoingEmail };

type Outcome = { itemIndex: number } & ({ kind: "sent"; id: string } | { kind: "refused"; error: string } | { kind: "unsent" });

/** Groups of at most this many emails share the ledger's statements. */
const MAX_GROUP = 25;
/** Groups under way at once. */
const GROUPS_IN_FLIGHT = 2;
/**
 * Emails of one sender `sending` at once in this process, whatever the number of runs and batch lanes sending through
 * it: about four per connection of the transport's pool, so the emails a crash leaves `unknown` are those really under
 * way, not a queue of them waiting for a connection. Two groups of ten keep a fast sender at its rate: each group also
 * waits for its two ledger statements, and with groups of five 500 emails/s went out at ~440/s.
 */
const SENDING_PER_SENDER = 20;

/** A counting semaphore: `take(n)` waits (first come, first served) until n permits are free. */
class Permits {
  private free: number;
  private readonly waiting: { n: number; go: () => void }[] = [];
  constructor(readonly size: number) {
    this.free = size;
  }
  take(n: number): Promise<void> {
    if (this.waiting.length === 0 && this.free >= n) {
      this.free -= n;
      return Promise.resolve();
    }
    return new Promise((go) => this.waiting.push({ n, go }));
  }
  give(n = 1): void {
    this.free += n;
    while (this.waiting.length > 0 && this.free >= this.waiting[0].n) {
      const next = this.waiting.shift()!;
      this.free -= next.n;
      next.go();
    }
  }
}

const permitsOf = new WeakMap<object, Permits>();

export async function sendEach(
  resolved: ResolvedSender,
  rt: NodeRuntime,
  key: LedgerKey,
  emails: EachEmail[],
  ctx: SendContext,
): Promise<"stopped" | void> {
  const each = rt.ports.ledger.each;
  if (!each) throw new Error("this sender needs the per-email send ledger, which the node ports lack");
  const { sender } = resolved;
  const pacingKey = sender.pacingKey!;
  const state: { fatal?: unknown; stopped: boolean } = { stopped: false };
  let permits = permitsOf.get(sender);
  if (!permits) permitsOf.set(sender, (permits = new Permits(SENDING_PER_SENDER)));
  const size = Math.max(1, Math.min(MAX_GROUP, permits.size / 2, Math.round(ctx.ratePerSecond / 5)));
  const running: Promise<void>[] = [];

  const settleGroup = async (outcomes: Outcome[]) => {
    const sent = outcomes.flatMap((o) => (o.kind === "sent" ? [{ itemIndex: o.itemIndex, providerId: o.id }] : []));
    const refused = outcomes.flatMap((o) => (o.kind === "refused" ? [{ itemIndex: o.itemIndex, error: o.error }] : []));
    const unsent = outcomes.flatMap((o) => (o.kind === "unsent" ? [o.itemIndex] : []));
    if (sent.length > 0) await rt.ports.ledger.markSent(key, rt.runId, sent);
    if (refused.length > 0 || unsent.length > 0) await each.settle(key, refused, unsent);
  };

  const sendOne = async (item: EachEmail, slotAt: number): Promise<Outcome> => {
    const at = { itemIndex: item.itemIndex };
    for (let attempt = 1; ; attempt++) {
      if (state.fatal !== undefined || state.stopped) return { ...at, kind: "unsent" };
      const slot =
        attempt === 1 ? waitUnlessStopped(slotAt - Date.now(), ctx.shouldStop) : ctx.pacing.acquire(pacingKey, ctx.ratePerSecond, ctx.shouldStop);
      if (!(await slot)) {
        state.stopped = true;
        return { ...at, kind: "unsent" };
      }
      if (state.fatal !== undefined) return { ...at, kind: "unsent" };
      try {
        const { id } = await sender.send(item.email);
        return { ...at, kind: "sent", id };
      } catch (error) {
        if (!(error instanceof EmailSendError)) throw error;
        if (error.details.refused === "recipient") return { ...at, kind: "refused", error: error.message };
        if (error.details.quota) throw new NodeError(await ctx.quotaSentence(error.details.quota), { cause: error });
        if (error.details.refused === "sender") {
          await rt.ports.senders.noteError?.(resolved.senderId ?? "", error.message).catch(() => undefined);
          throw new NodeError(`${resolved.label} refused the sender: ${error.message}. Fix the sender's settings, then retry the run; emails already sent will not be sent again.`, { cause: error });
        }
        if (!error.retryable) throw new NodeError(`The email provider refused the emails: ${error.message}`, { cause: error });
        // Throttled: every sender of this provider account waits a second (plus jitter) on the shared limiter; other
        // failures back off exponentially with full jitter.
        let wait = 0;
        if (error.details.throttled) await ctx.pacing.report(pacingKey, ctx.ratePerSecond, { retryAfterSeconds: 1 }, 429);
        else wait = Math.random() * Math.min(retryPolicy.maxDelayMs, retryPolicy.baseDelayMs * 2 ** (attempt - 1));
        if (Date.now() + wait > ctx.deadline) throw new NodeError(await ctx.budgetSentence(error.message), { cause: error });
        if (!(await waitUnlessStopped(wait, ctx.shouldStop))) {
          state.stopped = true;
          return { ...at, kind: "unsent" };
        }
      }
    }
  };

  // Never rejects: the first failure is kept in `state.fatal` (the other groups' emails then stay unsent).
  const runGroup = async (group: EachEmail[], firstSlotAt: number, spacingMs: number) => {
    const outcomes = await Promise.all(
      group.map((item, k) =>
        sendOne(item, firstSlotAt + k * spacingMs)
          .catch((error: unknown) => {
            state.fatal ??= error;
            // A fatal answer came to this email's call: it was not delivered.
            return { itemIndex: item.itemIndex, kind: "unsent" } as Outcome;
          })
          .finally(() => permits.give()),
      ),
    );
    await settleGroup(outcomes).catch((error: unknown) => {
      state.fatal ??= error;
    });
  };

  /** Takes the group's quota, permits, `sending` marks and send slots; answers its calls under way (or nothing to send). */
  const startGroup = async (group: EachEmail[]): Promise<{ run: Promise<void> } | undefined> => {
    if (resolved.dailyQuota !== undefined && rt.ports.senders.takeDaily) {
      if (!(await rt.ports.senders.takeDaily(pacingKey, resolved.dailyQuota, group.length))) {
        throw new NodeError(await ctx.quotaSentence("daily"));
      }
    }
    await permits.take(group.length);
    let going: EachEmail[] = [];
    try {
      const claimed = new Set(await each.begin(key, group.map((e) => e.itemIndex)));
      going = group.filter((e) => claimed.has(e.itemIndex));
      permits.give(group.length - going.length);
      if (going.length === 0) return undefined;
      const slots = ctx.pacing.reserve
        ? await ctx.pacing.reserve(pacingKey, ctx.ratePerSecond, going.length, sender.pacingMargin)
        : { waitMs: 0, spacingMs: 1000 / ctx.ratePerSecond };
      // Wrapped: an async function's returned promise would be awaited, and the next group would not overlap this one.
      return { run: runGroup(going, Date.now() + slots.waitMs, slots.spacingMs) };
    } catch (error) {
      // Nothing of the group was called: its permits back, its rows pending again (if the database lets us).
      permits.give(going.length === 0 ? group.length : going.length);
      if (going.length > 0) await each.settle(key, [], going.map((e) => e.itemIndex)).catch(() => undefined);
      throw error;
    }
  };

  for (let start = 0; start < emails.length; start += size) {
    if (state.fatal !== undefined || state.stopped) break;
    const group = emails.slice(start, start + size);
    // A failure here (the database) stops the loop; the groups under way finish and settle first.
    const started = await startGroup(group).catch((error: unknown) => {
      state.fatal ??= error;
      return undefined;
    });
    if (started) running.push(started.run);
    // The next group's statements overlap this group's calls; its first slot follows this group's last.
    if (running.length >= GROUPS_IN_FLIGHT) await running.shift();
  }
  await Promise.all(running);
  if (state.fatal !== undefined) throw state.fatal;
  if (state.stopped) return "stopped";
}
