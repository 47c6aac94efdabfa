/**
 * Group commit for hot single-row statements: calls made while a batch is in flight wait and go out together in the
 * next one. The first call goes out at once, so a quiet server adds no latency; a busy one sends one statement per
 * round trip instead of one per request. `flush` answers one result per item, in order; if it throws, every item of
 * that batch gets the error.
 */
export function groupCommit<I, O>(flush: (items: I[]) => Promise<O[]>, maxBatch = 500): (item: I) => Promise<O> {
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
      if (!flushing) void drain();
    });
}
