"use client";
// "Preview" next to "Run": a preview run renders, dedupes and checks suppression for every email and
// sends none; this dialog shows the first emails as the recipient would see them, the counts, and "Send N emails",
// which sends exactly what was previewed and opens the run to watch its progress.
// A graph with AI nodes is estimated first, before anything is paid: an estimate run counts every prompt's tokens and
// asks the model for a few sample items; the preview (which asks for every item) starts only when the person agrees.
import dynamic from "next/dynamic";
import { useState } from "react";
import { Button } from "@/components/ui";
import { startEstimate } from "@/lib/client/ai";
import { startPreview } from "@/lib/client/sending";

// The dialog's body loads when a preview starts (preview-dialog-body.tsx), not with the editor.
const PreviewDialog = dynamic(() => import("./preview-dialog-body").then((m) => m.PreviewDialog), { ssr: false });

/** `estimateFirst`: the graph has AI nodes, so the dialog opens on their estimate and asks before paying for the rest. */
export function PreviewButton({ prepare, disabled, estimateFirst }: { prepare: () => Promise<string | null>; disabled?: boolean; estimateFirst?: boolean }) {
  const [runs, setRuns] = useState<{ workflowId: string; estimate: string | null; preview: string | null } | null>(null);
  const [starting, setStarting] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const start = async () => {
    setStarting(true);
    setError(null);
    try {
      const workflowId = await prepare();
      if (workflowId && estimateFirst) setRuns({ workflowId, estimate: (await startEstimate(workflowId)).runId, preview: null });
      else if (workflowId) setRuns({ workflowId, estimate: null, preview: (await startPreview(workflowId)).runId });
    } catch (e) {
      setError(e);
    } finally {
      setStarting(false);
    }
  };
  return (
    <>
      <Button variant="secondary" size="sm" onClick={() => void start()} loading={starting} disabled={disabled} title="Render every email without sending any" data-testid="preview">
        Preview
      </Button>
      {(runs || error) && (
        <PreviewDialog
          estimateRunId={runs?.estimate ?? null}
          runId={runs?.preview ?? null}
          onPreview={async () => {
            const preview = await startPreview(runs!.workflowId);
            setRuns((r) => (r ? { ...r, preview: preview.runId } : r));
          }}
          startError={error}
          onClose={() => (setRuns(null), setError(null))}
        />
      )}
    </>
  );
}
