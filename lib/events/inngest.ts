// The Inngest adapter (one outside system, like lib/email and lib/google): the client and the run wake-up event.
// lib/ sends events through it; inngest/ holds only the functions Inngest calls (lib never imports inngest/).
import { eventType, Inngest } from "inngest";
import { z } from "zod";

/** `flowmail/run.wake`: a workflow may have a run to claim (or, with runId, a stale run to resume). */
export const runWakeEvent = eventType("flowmail/run.wake", {
  schema: z.object({ workflowId: z.string(), resumeRunId: z.string().optional() }),
});

const globalForInngest = globalThis as unknown as { __flowmailInngest?: Inngest };

/**
 * The Inngest client. The SDK reads INNGEST_EVENT_KEY, INNGEST_SIGNING_KEY and INNGEST_DEV (a flag or the dev
 * server's URL) itself; nothing here reads the app config, because `next build` evaluates the /api/inngest route
 * module and the full config refuses to load without production secrets.
 */
export function getInngest(): Inngest {
  globalForInngest.__flowmailInngest ??= new Inngest({ id: "flowmail" });
  return globalForInngest.__flowmailInngest;
}

export async function sendRunWake(workflowId: string, resumeRunId?: string): Promise<void> {
  await getInngest().send(runWakeEvent.create({ workflowId, ...(resumeRunId ? { resumeRunId } : {}) }));
}
