/** The run is no longer this process's (finished elsewhere, or taken over): it must not execute another step here. */
export class RunLostError extends Error {
  constructor(readonly runId: string) {
    super(`Run ${runId} is no longer held by this process`);
    this.name = "RunLostError";
  }
}

/** Why a run stops before its next node or email batch: a person cancelled it, or this process is shutting down. */
export type StopReason = "cancel" | "handback";
