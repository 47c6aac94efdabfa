import { AsyncResource } from "node:async_hooks";

/**
 * A runner that calls a function in the async context this factory was called in. Background work made once at the
 * server's start (the executor, the webhook delivery loop) is woken from request handlers; work started by such a wake
 * would otherwise carry that request's async context for as long as it runs. Next.js keeps its request stores in
 * AsyncLocalStorage: its fetch reads them to treat a call as the request's own (cache decision, metrics kept on the
 * request), and they stay reachable while the work runs.
 */
export function contextRunner(): <T>(fn: () => T) => T {
  return AsyncResource.bind(<T>(fn: () => T): T => fn());
}
