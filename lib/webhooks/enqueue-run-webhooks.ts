import "server-only";

export type FinishedRun = {
  runId: string;
  workflowId: string;
  accountId: string;
  status: "SUCCESS" | "FAILED";
  result: { emailsSent: number; filteredOut: number; totalRows: number } | null;
  error: string | null;
};

/**
 * Seam between the run engine and webhooks: called once when a run reaches SUCCESS or FAILED.
 * The integrations module records one delivery per matching webhook and schedules it.
 */
export async function enqueueRunWebhooks(_run: FinishedRun): Promise<void> {
  // Filled in by the webhooks work (issue 6); until then no webhook can be registered, so there is nothing to send.
}
