import "server-only";
import { getConfig } from "@/lib/config";
import { getEmbeddedExecutor } from "./embedded-executor";

/**
 * The wake-up sent on every enqueue and every finished run: an Inngest event when Inngest is configured, else a poke
 * of this process's embedded executor. A lost wake-up only delays a run: the sweep finds it.
 */
export async function wakeWorkflow(workflowId: string): Promise<void> {
  if (getConfig().inngest.enabled) {
    const { sendRunWake } = await import("@/inngest/client");
    await sendRunWake(workflowId);
    return;
  }
  getEmbeddedExecutor()?.poke(workflowId);
}
