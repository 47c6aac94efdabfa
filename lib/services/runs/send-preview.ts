import "server-only";
import { AppError } from "@/lib/errors";
import { enqueueDerivedRun, type DerivedRun } from "@/lib/engine";

/**
 * POST /api/workflows/runs/:runId/send — sends exactly what a SUCCESS preview rendered: a new live run
 * (`trigger: "send"`, `sendOf`) that reuses every node of the preview except its OUTPUT nodes, so the emails are
 * rendered from the very same node outputs (AI answers included); only OUTPUT executes, and it re-checks the
 * suppression list at send time. A preview is sent at most once; a preview made with `until` ("test this node")
 * cannot be sent (409): it did not render the whole workflow.
 */
export async function sendPreview(accountId: string, runId: string): Promise<DerivedRun> {
  return enqueueDerivedRun({
    accountId,
    sourceRunId: runId,
    trigger: "send",
    mode: "live",
    reuseNode: (node) => node.type !== "OUTPUT",
    check: (source) => {
      if (source.mode !== "preview" || source.status !== "SUCCESS") {
        const what = source.mode !== "preview" ? "a live run" : `a ${source.status} preview`;
        throw new AppError("conflict", `Only a SUCCESS preview can be sent; this run is ${what}.`);
      }
      // A "test this node" preview stopped at one node: its OUTPUT nodes were SKIPPED, nothing was rendered to send.
      if (source.untilNodeId !== null) {
        throw new AppError(
          "conflict",
          `This preview tested node "${source.untilNodeId}" only (the rest of the workflow was skipped), so it has no emails to send. Preview the whole workflow, then send that preview.`,
        );
      }
    },
    once: new AppError("conflict", "This preview was already sent: preview the workflow again to send it again."),
  });
}
