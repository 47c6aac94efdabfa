"use client";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { api, errorMessage } from "@/lib/client/api";
import type { RunSummary } from "@/lib/client/types";
import { Button } from "@/components/ui";

type Props = {
  run: Pick<RunSummary, "runId" | "status" | "cancelRequested" | "outputExpired">;
  /** Called after a successful action; by default a retry opens the new run's page. */
  onRetried?: (runId: string) => void;
  onCancelled?: () => void;
  size?: "sm" | "md";
};

/**
 * Retry (FAILED runs: a new run reusing the nodes that succeeded; emails already sent are not sent again) and Cancel
 * (PENDING and RUNNING runs) where they apply. Nothing shows for other states.
 */
export function RunActions({ run, onRetried, onCancelled, size = "sm" }: Props) {
  const router = useRouter();
  const [busy, setBusy] = useState<"retry" | "cancel" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [cancelAsked, setCancelAsked] = useState(false);

  const retry = async () => {
    setBusy("retry");
    setError(null);
    try {
      const next = await api.postEmpty<{ runId: string }>(`/api/workflows/runs/${run.runId}/retry`);
      if (onRetried) onRetried(next.runId);
      else router.push(`/runs/${next.runId}`);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  const cancel = async () => {
    setBusy("cancel");
    setError(null);
    try {
      await api.postEmpty(`/api/workflows/runs/${run.runId}/cancel`);
      setCancelAsked(true);
      onCancelled?.();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  const stopping = run.status === "RUNNING" && (run.cancelRequested || cancelAsked);
  return (
    <span className="inline-flex items-center gap-2">
      {run.status === "FAILED" && !run.outputExpired && (
        <Button size={size} variant="secondary" loading={busy === "retry"} onClick={retry} data-testid="run-retry"
          title="A new run that reuses the nodes that succeeded; emails already sent are not sent again">
          Retry
        </Button>
      )}
      {(run.status === "PENDING" || run.status === "RUNNING") && (
        <Button size={size} variant="danger" loading={busy === "cancel"} disabled={stopping} onClick={cancel} data-testid="run-cancel">
          {stopping ? "Stopping…" : "Cancel"}
        </Button>
      )}
      {error && (
        <span className="text-xs text-red-700" role="alert" data-testid="run-action-error">
          {error}
        </span>
      )}
    </span>
  );
}

const TRIGGERS: Record<string, string> = { manual: "Manual", schedule: "Schedule", hook: "Inbound hook", retry: "Retry", send: "Send of preview" };

/** "Manual", "Retry", … and, for a PENDING run, its place in its workflow's queue. */
export function RunOrigin({ run }: { run: Pick<RunSummary, "trigger" | "status" | "queuePosition" | "mode"> }) {
  return (
    <span className="inline-flex items-center gap-2 text-xs text-slate-500">
      <span data-testid="run-trigger">{TRIGGERS[run.trigger ?? "manual"] ?? run.trigger}</span>
      {(run.mode === "preview" || run.mode === "estimate") && (
        <span className="rounded bg-amber-50 px-1.5 py-0.5 text-amber-800 ring-1 ring-amber-200" data-testid="run-mode">
          {run.mode}
        </span>
      )}
      {run.status === "PENDING" && run.queuePosition !== undefined && (
        <span className="rounded bg-slate-100 px-1.5 py-0.5 text-slate-700" data-testid="run-queue-position">
          {run.queuePosition === 1 ? "next in queue" : `#${run.queuePosition} in queue`}
        </span>
      )}
    </span>
  );
}
