import "server-only";
import { after } from "next/server";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { getEmbeddedExecutor } from "./embedded-executor";
import { notifyWake } from "./wake-channel";

/**
 * The wake-up sent on every enqueue and every finished run: an Inngest event when Inngest is configured, else a poke
 * of this process's embedded executor (or, in a process without one, a NOTIFY to the worker processes). A lost wake-up only delays a run: the sweep finds it.
 */
export async function wakeWorkflow(workflowId: string): Promise<void> {
  if (getConfig().inngest.enabled) {
    const { sendRunWake } = await import("@/lib/events/inngest");
    await sendRunWake(workflowId);
    return;
  }
  pokeOrNotify(workflowId);
}

/** This process's executor when it has one; else, on PostgreSQL, the worker processes (EXECUTOR=off). */
function pokeOrNotify(workflowId: string): void {
  const executor = getEmbeddedExecutor();
  if (executor) executor.poke(workflowId);
  else if (getConfig().databaseUrl) notifyWake(workflowId);
}

/**
 * Work that must outlive the response: handed to Next's `after()`, so a host that freezes
 * the function once it has answered still finishes it. Outside a request (the executor, scripts, tests calling
 * services directly) there is no response to wait for, and `after()` throws: the work then just starts now.
 */
export function afterResponse(what: string, work: () => Promise<unknown>, fields: Record<string, unknown> = {}): void {
  const run = () => work().catch((error) => log.error(`${what} failed`, { ...fields, error }));
  try {
    after(run);
  } catch {
    void run();
  }
}

/**
 * The enqueue's wake-up. The embedded executor is poked synchronously (no I/O: the run starts while the 202 is being
 * written); an Inngest event send is a network round trip, so it goes after the response.
 */
export function wakeAfterResponse(workflowId: string): void {
  if (!getConfig().inngest.enabled) {
    pokeOrNotify(workflowId);
    return;
  }
  afterResponse("wake-up (the sweep will repair it)", () => wakeWorkflow(workflowId), { workflowId });
}
