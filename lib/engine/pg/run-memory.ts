import "server-only";

/** Entries a map keeps before it is trimmed: a run that was never forgotten (its process lost it) must not stay forever. */
const MAX_RUNS = 1000;

/**
 * What this process remembers about the runs it executes, beyond any one store: when it last proved each run its own
 * (the heartbeat), each run's last stop check, and when each OUTPUT node's progress was last written. One object per
 * process, shared by every PgRunStore and the node ports: under Inngest every step is an invocation with a store of its
 * own, and a memory per store would cost a heartbeat, a stop check and a progress write per step. A run's entries go
 * in one call, `forget` (PgRunStore.forget), when this process stops executing it.
 */
export class RunMemory {
  /** When this process last proved the run its own (ms): its claim, or a heartbeat. */
  readonly beatAt = new Map<string, number>();
  /**
   * The heartbeat value this process last wrote for each run it claimed, took over or beat for: proof of ownership.
   * Another process can only take a run over by writing a newer heartbeat, so "the heartbeat is still the one I wrote"
   * means "nobody took it over" (queue.ts's reclaimOwnRun).
   */
  readonly ownBeats = new Map<string, string>();
  /** The run's last stop check: when, and whether a cancel was asked (run-control.ts). */
  readonly stopChecks = new Map<string, { at: number; cancel: boolean }>();
  /** When each node's progress was last written, by execution run and node (pg-node-ports.ts). */
  readonly progressAt = new Map<string, Map<string, number>>();

  noteBeat(runId: string, at = Date.now()): void {
    if (this.beatAt.size >= MAX_RUNS && !this.beatAt.has(runId)) this.beatAt.clear();
    this.beatAt.set(runId, at);
  }

  noteOwnBeat(runId: string, beat: string): void {
    // A lost entry only makes a reclaim fail safe (the sweep resumes the run instead).
    if (this.ownBeats.size >= 10 * MAX_RUNS && !this.ownBeats.has(runId)) this.ownBeats.clear();
    this.ownBeats.set(runId, beat);
  }

  noteStopCheck(runId: string, cancel: boolean, at = Date.now()): void {
    if (this.stopChecks.size >= MAX_RUNS && !this.stopChecks.has(runId)) this.stopChecks.clear();
    this.stopChecks.set(runId, { at, cancel });
  }

  /** Whether the node's progress is due again (none written within `intervalMs`); notes the write when it is. */
  progressDue(runId: string, nodeId: string, intervalMs: number, now = Date.now()): boolean {
    let nodes = this.progressAt.get(runId);
    if (nodes && now - (nodes.get(nodeId) ?? 0) < intervalMs) return false;
    if (!nodes) {
      if (this.progressAt.size >= MAX_RUNS) {
        for (const [id, times] of this.progressAt) if ([...times.values()].every((at) => now - at > 60_000)) this.progressAt.delete(id);
      }
      this.progressAt.set(runId, (nodes = new Map()));
    }
    nodes.set(nodeId, now);
    return true;
  }

  /** This process stops executing the run (finalized or handed back): everything it remembers of the run goes. */
  forget(runId: string): void {
    this.beatAt.delete(runId);
    this.ownBeats.delete(runId);
    this.stopChecks.delete(runId);
    this.progressAt.delete(runId);
  }
}

const slot = globalThis as unknown as { __flowmailRunMemory?: RunMemory };

/** The process's RunMemory, kept on globalThis so that a dev server's reload keeps what the running runs need. */
export function runMemory(): RunMemory {
  return (slot.__flowmailRunMemory ??= new RunMemory());
}
