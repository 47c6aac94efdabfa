import type { NodeExecutor } from "../types";

export const triggerExecutor: NodeExecutor<"TRIGGER"> = {
  async execute() {
    return { kind: "done", output: {} };
  },
};
