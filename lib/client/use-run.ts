"use client";
// Polls a run with backoff: first check after 1 s, each next wait ×1.5 up to 5 s, and stops once the run
// is SUCCESS or FAILED. A plain timer loop (not refetchInterval) so the delay can grow between polls.
import { useEffect, useState } from "react";
import { errorMessage } from "./api";
import { fetchRun } from "./hooks";
import type { Run } from "./types";

export const POLL_START_MS = 1000;
export const POLL_FACTOR = 1.5;
export const POLL_MAX_MS = 5000;

export function nextDelay(current: number): number {
  return Math.min(POLL_MAX_MS, Math.round(current * POLL_FACTOR));
}

export const isFinished = (run: Pick<Run, "status"> | null | undefined) => run?.status === "SUCCESS" || run?.status === "FAILED";

export function useRun(runId: string | null): { run: Run | null; error: string | null } {
  // What the polls found, tagged with the run they were for: after runId changes, the previous run's
  // data and error are not shown (derived here, not reset in the effect) until the new run's first read.
  const [state, setState] = useState<{ runId: string | null; run: Run | null; error: string | null }>({ runId: null, run: null, error: null });

  useEffect(() => {
    if (!runId) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async (delay: number) => {
      try {
        const next = await fetchRun(runId);
        if (cancelled) return;
        setState({ runId, run: next, error: null });
        if (isFinished(next)) return;
      } catch (e) {
        if (cancelled) return;
        setState((s) => ({ runId, run: s.runId === runId ? s.run : null, error: errorMessage(e) }));
      }
      timer = setTimeout(() => void poll(nextDelay(delay)), delay);
    };
    // The first read is immediate so an already finished run (history, run page) shows at once.
    void poll(POLL_START_MS);
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
    };
  }, [runId]);

  const current = runId !== null && state.runId === runId;
  return { run: current ? state.run : null, error: current ? state.error : null };
}
