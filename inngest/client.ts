import { eventType, Inngest } from "inngest";
import { z } from "zod";
import { getConfig } from "@/lib/config";

/** `flowmail/run.wake`: a workflow may have a run to claim (or, with runId, a stale run to resume). */
export const runWakeEvent = eventType("flowmail/run.wake", {
  schema: z.object({ workflowId: z.string(), resumeRunId: z.string().optional() }),
});

const globalForInngest = globalThis as unknown as { __flowmailInngest?: Inngest };

/** The Inngest client, built lazily so that config is read at runtime (INNGEST_DEV, keys), not at import. */
export function getInngest(): Inngest {
  if (!globalForInngest.__flowmailInngest) {
    const config = getConfig();
    globalForInngest.__flowmailInngest = new Inngest({
      id: "flowmail",
      isDev: config.inngest.dev,
      eventKey: config.inngest.eventKey,
      signingKey: config.inngest.signingKey,
    });
  }
  return globalForInngest.__flowmailInngest;
}

export async function sendRunWake(workflowId: string, resumeRunId?: string): Promise<void> {
  await getInngest().send(runWakeEvent.create({ workflowId, ...(resumeRunId ? { resumeRunId } : {}) }));
}
