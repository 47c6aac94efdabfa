"use client";
// The Preview dialog's body (components/editor/preview-dialog.tsx opens it): loaded when a preview starts, not with the
// editor, so the editor's first JavaScript stays within its budget.
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { Button, ErrorAlert, Spinner, formatCount } from "@/components/ui";
import { EmailBody } from "@/components/runs/recipients-table";
import { AiEstimateView } from "@/components/runs/ai-estimate";
import { SendProgress } from "@/components/runs/send-progress";
import { formatEstimatedUsd, formatUsage } from "@/lib/client/ai-usage-text";
import { fetchRunEmails, sendPreview } from "@/lib/client/sending";
import { isFinished, useRun } from "@/lib/client/use-run";

// The first page of rendered emails (the list endpoint's largest page), stepped through one at a time.
const SHOWN = 100;

export function PreviewDialog({ estimateRunId, runId, onPreview, startError, onClose }: {
  estimateRunId: string | null;
  runId: string | null;
  onPreview: () => Promise<void>;
  startError: unknown;
  onClose: () => void;
}) {
  const router = useRouter();
  const { run, error } = useRun(runId);
  const estimateRun = useRun(estimateRunId);
  const [previewing, setPreviewing] = useState(false);
  const [previewError, setPreviewError] = useState<unknown>(null);
  const [shown, setShown] = useState(0);
  const [sending, setSending] = useState(false);
  const [sendError, setSendError] = useState<unknown>(null);
  const outputId = run ? Object.keys(run.nodes ?? {}).find((id) => run.nodes[id].type === "OUTPUT" && run.nodes[id].status === "SUCCESS") : undefined;
  const emails = useQuery({
    queryKey: ["runs", runId, "preview-emails", outputId],
    queryFn: () => fetchRunEmails(runId!, outputId!, { status: "preview", limit: SHOWN }),
    enabled: !!runId && !!outputId && run?.status === "SUCCESS",
  });
  const planned = run?.result?.emailsPlanned ?? 0;
  // Escape closes the dialog, as dialogs do.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [onClose]);
  const email = emails.data?.items[shown];
  const preview = async () => {
    setPreviewing(true);
    setPreviewError(null);
    try {
      await onPreview();
    } catch (e) {
      setPreviewError(e);
    } finally {
      setPreviewing(false);
    }
  };
  const estimated = estimateRun.run?.status === "SUCCESS" ? estimateRun.run.result?.estimate : undefined;
  const estimating = !!estimateRunId && !runId;
  const aiRunning = run && !isFinished(run) ? Object.entries(run.nodes ?? {}).filter(([, n]) => n.type === "AI" && n.status === "RUNNING") : [];
  const send = async () => {
    setSending(true);
    setSendError(null);
    try {
      const sent = await sendPreview(runId!);
      router.push(`/runs/${sent.runId}`);
    } catch (e) {
      setSendError(e);
      setSending(false);
    }
  };
  return (
    <div className="fixed inset-0 z-50 flex items-center justify-center bg-slate-900/40 p-4" role="dialog" aria-modal="true" aria-labelledby="preview-title" data-testid="preview-dialog">
      <div className="flex max-h-[90vh] w-full max-w-3xl flex-col overflow-hidden rounded-xl bg-white shadow-xl">
        <div className="flex items-center justify-between border-b border-slate-200 px-5 py-3">
          <h2 id="preview-title" className="text-base font-semibold text-slate-900">Preview</h2>
          <Button variant="ghost" size="sm" onClick={onClose} data-testid="preview-close">Close</Button>
        </div>
        <div className="space-y-4 overflow-auto px-5 py-4">
          {startError ? <ErrorAlert error={startError} /> : null}
          {estimateRun.error ? <ErrorAlert error={new Error(estimateRun.error)} /> : null}
          {error ? <ErrorAlert error={new Error(error)} /> : null}
          {estimating && estimateRunId && !isFinished(estimateRun.run) && (
            <p className="flex items-center gap-2 text-sm text-slate-600" data-testid="estimate-pending">
              <Spinner /> Counting the tokens of every prompt and asking the model for a few sample items (nothing is sent)…
            </p>
          )}
          {estimating && estimateRun.run?.status === "FAILED" && (
            <>
              <ErrorAlert error={new Error(estimateRun.run.error ?? "The estimate failed.")} testId="estimate-error" />
              {/Settings/.test(estimateRun.run.error ?? "") && (
                <Link href="/settings" className="text-sm font-medium text-brand-700 hover:underline" data-testid="estimate-settings">
                  Open Settings →
                </Link>
              )}
            </>
          )}
          {estimating && estimated && <AiEstimateView estimate={estimated} sampleUsage={estimateRun.run?.result?.ai} />}
          {estimating && estimateRun.run?.status === "SUCCESS" && !estimated && (
            <p className="text-sm text-slate-600">No AI node runs in this workflow: nothing to pay for.</p>
          )}
          {previewError ? <ErrorAlert error={previewError} testId="preview-start-error" /> : null}
          {runId && !isFinished(run) && (
            <div className="space-y-2" data-testid="preview-pending">
              <p className="flex items-center gap-2 text-sm text-slate-600">
                <Spinner /> {aiRunning.length ? "Asking the model for every item, then rendering every email (nothing is sent)…" : "Rendering every email (nothing is sent)…"}
              </p>
              {aiRunning.map(([id, n]) => (
                <p key={id} className="flex flex-wrap items-center gap-2 text-xs text-slate-600">
                  <span className="font-mono">{id}</span>
                  <SendProgress nodeId={id} result={n} />
                </p>
              ))}
            </div>
          )}
          {run?.status === "FAILED" && <ErrorAlert error={new Error(run.error ?? "The preview failed.")} testId="preview-error" />}
          {run?.status === "SUCCESS" && (
            <>
              <dl className="grid grid-cols-3 gap-2" data-testid="preview-counts">
                <Count label="Planned" value={planned} testId="preview-planned" />
                <Count label="Suppressed" value={run.result?.suppressed ?? 0} testId="preview-suppressed" />
                <Count label="Duplicates" value={run.result?.duplicates ?? 0} testId="preview-duplicates" />
              </dl>
              {run.result?.ai && run.result.ai.calls > 0 && (
                <p className="text-xs text-slate-600" data-testid="preview-ai">
                  The model answered in {formatUsage(run.result.ai)}; sending these emails asks it nothing again.
                </p>
              )}
              {email ? (
                <div className="space-y-2" data-testid="preview-email">
                  <div className="flex items-center justify-between text-xs text-slate-500">
                    <span data-testid="preview-position">
                      Email {shown + 1} of {emails.data!.items.length < planned ? `the first ${emails.data!.items.length}` : emails.data!.items.length}
                    </span>
                    <span className="flex gap-1">
                      <Button size="sm" variant="ghost" disabled={shown === 0} onClick={() => setShown(shown - 1)} data-testid="preview-prev">‹</Button>
                      <Button size="sm" variant="ghost" disabled={shown + 1 >= emails.data!.items.length} onClick={() => setShown(shown + 1)} data-testid="preview-next">›</Button>
                    </span>
                  </div>
                  <p className="text-sm"><span className="text-slate-500">To:</span> <span className="font-mono" data-testid="preview-to">{email.to}</span></p>
                  <p className="text-sm"><span className="text-slate-500">Subject:</span> <span className="font-medium" data-testid="preview-subject">{email.subject}</span></p>
                  <EmailBody body={email.body ?? ""} format={email.format} testId="preview-body" />
                </div>
              ) : emails.isLoading ? (
                <Spinner />
              ) : (
                <p className="text-sm text-slate-500">No email would be sent.</p>
              )}
              {sendError ? <ErrorAlert error={sendError} /> : null}
            </>
          )}
        </div>
        <div className="flex flex-wrap justify-end gap-2 border-t border-slate-200 px-5 py-3">
          <Button variant="secondary" size="sm" onClick={onClose}>Cancel</Button>
          {estimating ? (
            <Button
              size="sm"
              className="!h-auto min-h-8 py-1.5 !whitespace-normal text-left"
              onClick={() => void preview()}
              loading={previewing}
              disabled={estimateRun.run?.status !== "SUCCESS"}
              data-testid="preview-continue"
            >
              {estimated ? `Ask the model for every item${estimated.costUsd === null ? "" : ` (${formatEstimatedUsd(estimated.costUsd)})`} and preview` : "Preview the emails"}
            </Button>
          ) : (
            <Button size="sm" onClick={() => void send()} loading={sending} disabled={run?.status !== "SUCCESS" || planned === 0} data-testid="preview-send">
              Send {formatCount(planned)} {planned === 1 ? "email" : "emails"}
            </Button>
          )}
        </div>
      </div>
    </div>
  );
}

function Count({ label, value, testId }: { label: string; value: number; testId: string }) {
  return (
    <div className="rounded-lg bg-slate-50 px-3 py-2 ring-1 ring-slate-200">
      <dt className="text-[11px] text-slate-500">{label}</dt>
      <dd className="text-lg font-semibold text-slate-900" data-testid={testId}>{formatCount(value)}</dd>
    </div>
  );
}
