/**
 * Group commit for hot single-row statements: calls made while a batch is in flight wait and go out together in the
 * next one. The first call goes out at once, so a quiet server adds no latency; a busy one sends one statement per
 * round trip instead of one per request. `flush` answers one result per item, in order; if it throws, every item of
 * that batch gets the error.
 *
 * `gatherTurn`: the first batch is built at the end of the current turn of the event loop (setImmediate) instead of at
 * once, so every call made in this turn joins it — a Node server handles each socket that became readable in one turn
 * (the requests that arrived together) before the next turn. It costs a lone call one more turn of the event loop
 * (postgres.js itself buffers a statement's bytes until setImmediate), no round trip.
 */
export function groupCommit<I, O>(
  flush: (items: I[]) => Promise<O[]>,
  maxBatch = 500,
  options: { gatherTurn?: boolean } = {},
): (item: I) => Promise<O> {
  type Waiter = { item: I; resolve: (value: O) => void; reject: (error: unknown) => void };
  let queue: Waiter[] = [];
  let flushing = false;

  async function drain(): Promise<void> {
    flushing = true;
    try {
      while (queue.length > 0) {
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        try {
          const results = await flush(batch.map((w) => w.item));
          if (results.length !== batch.length) throw new Error(`group commit: ${results.length} results for ${batch.length} items`);
          batch.forEach((w, i) => w.resolve(results[i]));
        } catch (error) {
          batch.forEach((w) => w.reject(error));
        }
      }
    } finally {
      flushing = false;
    }
  }

  return (item: I) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (flushing) return;
      if (options.gatherTurn) {
        flushing = true; // a drain is scheduled: later calls of this turn only queue
        setImmediate(() => void drain());
      } else void drain();
    });
}
