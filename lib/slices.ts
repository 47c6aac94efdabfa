/**
 * CPU work on the server's main thread (a 100,000-row page conversion, a filter, 40,000 emails rendered) is cut into
 * slices of at most SLICE_MS, and the event loop is given back between them: an HTTP request needs a few turns of the
 * loop (its parse, each statement's answer, its response), and each turn waits for the slice in progress. With
 * ~40 ms slices a request that came during a big run's start took 100–140 ms (bench/freeze.ts on PGlite).
 */
export const SLICE_MS = 8;

/**
 * A clock for one piece of sliced work: `due()` is true once the current slice has lasted SLICE_MS (cheap: it reads
 * the time only every 256th call); `yield()` gives the loop back and starts a new slice.
 */
export function sliceClock(options: { everyCall?: boolean } = {}): { due(): boolean; yield(): Promise<void> } {
  let started = performance.now();
  let calls = 0;
  // `everyCall`: for work whose steps can each be large (an email of hundreds of kilobytes), the time is read at each.
  const mask = options.everyCall ? 0 : 255;
  return {
    due() {
      return (++calls & mask) === 0 && performance.now() - started >= SLICE_MS;
    },
    async yield() {
      await new Promise<void>((resolve) => setImmediate(resolve));
      started = performance.now();
    },
  };
}
