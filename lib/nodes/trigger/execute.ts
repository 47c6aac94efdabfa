import type { NodeExecutor } from "../types";

/**
 * A run started by an inbound hook outputs the delivery's JSON body as `{ body }` (so `{{start.body.email}}` works);
 * every other run (manual, schedule, retry, send) outputs `{}`.
 */
export const triggerExecutor: NodeExecutor<"TRIGGER"> = {
  async execute(_node, runtime) {
    if (runtime.trigger === "hook") return { kind: "done", output: { body: runtime.triggerBody ?? null } };
    return { kind: "done", output: {} };
  },
};
