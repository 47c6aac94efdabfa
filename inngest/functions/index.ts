import { executeRunFunction } from "./execute-run";
import { sweepRunsFunction } from "./sweep-runs";
import { deliverWebhookFunction } from "./deliver-webhook";
import { enqueueSchedulesFunction } from "./enqueue-schedules";

/** Every Inngest function this app serves at /api/inngest (one entry per function; others append theirs). */
export const functions = [
  executeRunFunction,
  sweepRunsFunction,
  deliverWebhookFunction,
  enqueueSchedulesFunction,
];
