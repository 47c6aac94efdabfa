// What the kill-mid-AI fault tests (kill-mid-ai, takeover-mid-ai) share: the fake model answering a known number of
// requests and then holding every later one (the calls in flight when the process asking it is killed), the wait for
// that point, and the run's AI item ledger read back afterwards.
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { prompt, type FakeOpenAI } from "@/test/support/fake-openai";
import { itemOf } from "@/test/ai/helpers";
import { waitFor } from "./gate";

export type AnswerThenHold = {
  /** Answers given so far, by item name (an item answered twice has 2). */
  readonly answeredPerItem: Map<string, number>;
  answers(): number;
  /**
   * Resolves once the first `count` requests are answered, a further one is held, and the process asking has had a
   * moment to record the last answers: the moment to kill it. Answers how many requests the fake had received by
   * then. `died`: the asking process's exit, which fails the wait if it comes first.
   */
  killPoint(died?: Promise<unknown>): Promise<number>;
  /** Stops holding requests: every later one is answered. */
  release(): void;
};

/** From now on, `ai` answers `count` requests (each with a greeting naming its item), then holds every further one. */
export function answerThenHold(ai: FakeOpenAI, count: number): AnswerThenHold {
  const answeredPerItem = new Map<string, number>();
  let answers = 0;
  ai.answer((req) => {
    const name = itemOf(prompt(req));
    answeredPerItem.set(name, (answeredPerItem.get(name) ?? 0) + 1);
    if (++answers === count) ai.hangNext(1_000_000); // every later request stays in flight
    return { greeting: `Hi ${name}` };
  });
  return {
    answeredPerItem,
    answers: () => answers,
    async killPoint(died) {
      const answered = waitFor(`${count} answers`, () => answers >= count, 150_000);
      await (died ? Promise.race([answered, died.then((code) => Promise.reject(new Error(`the process exited first: ${String(code)}`)))]) : answered);
      await waitFor("calls in flight to be held", () => ai.requests.length > count, 30_000);
      // Every answer is recorded before its lane moves on: give the last ones a moment to be written.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      return ai.requests.length;
    },
    release: () => ai.hangNext(0),
  };
}

/** A run's AI items: how many are done, of how many. */
export async function aiItemLedger(db: Db, runId: string): Promise<{ done: number; total: number }> {
  const [items] = await execRows<{ done: number; total: number }>(
    db,
    sql`select count(*) filter (where status = 'done')::int as done, count(*)::int as total from ai_items where run_id = ${runId}`,
  );
  return { done: Number(items.done), total: Number(items.total) };
}
