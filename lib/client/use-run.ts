"use client";
// Polls a run with backoff: first check after 1 s, each next wait ×1.5 up to 5 s, and stops once the run
// is SUCCESS or FAILED. A plain timer loop (not refetchInterval) so the delay can grow between polls.
import { useEffect, useRef, useState } from "react";
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
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<string | null>(null);
  const generation = useRef(0);

  useEffect(() => {
    const mine = ++generation.current;
    setRun(null);
    setError(null);
    if (!runId) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async (delay: number) => {
      try {
        const next = await fetchRun(runId);
        if (generation.current !== mine) return;
        setRun(next);
        setError(null);
        if (isFinished(next)) return;
      } catch (e) {
        if (generation.current !== mine) return;
        setError(errorMessage(e));
      }
      timer = setTimeout(() => void poll(nextDelay(delay)), delay);
    };
    // The first read is immediate so an already finished run (history, run page) shows at once.
    void poll(POLL_START_MS);
    return () => {
      generation.current++;
      if (timer) clearTimeout(timer);
    };
  }, [runId]);

  return { run, error };
}
