import type { NodePorts } from "../ports";
import type { NodeRuntime } from "../types";

/** A runtime over fixed upstream outputs, for unit tests of executors that need no database. */
export function fakeRuntime(outputs: Record<string, Record<string, unknown>>, skipped: string[] = []): NodeRuntime {
  const state = (id: string) =>
    outputs[id] ? { status: "SUCCESS" as const, output: outputs[id] } : skipped.includes(id) ? { status: "SKIPPED" as const, output: null } : undefined;
  return {
    ports: unavailablePorts,
    runId: "run_test",
    workflowId: "wf_test",
    accountId: "usr_test",
    graph: { nodes: [], edges: [] },
    mode: "live",
    trigger: "manual",
    ledgerRunId: "run_test",
    triggerBody: undefined,
    nodeState: state,
    nodeOutputs: () => outputs,
    templateContext: (field, item) => ({ node: state, nodeId: "n", field, ...(item ? { item: item.value, itemIndex: item.index } : {}) }),
    log: async () => {},
    shouldStop: async () => false,
  };
}

const unavailable = () => {
  throw new Error("This unit test's runtime has no ports: use an executor that needs none, or pass ports");
};

/** Ports that refuse every call: a test of a pure executor (FILTER, templates) must not reach them. */
export const unavailablePorts: NodePorts = {
  uploads: { find: unavailable, readRows: unavailable },
  drive: { readRows: unavailable },
  senders: { resolve: unavailable },
  sendLimits: { dailyQuota: 0, budgetMinutes: 0, ledgerChunk: 0 },
  aiSettings: unavailable,
  ledger: new Proxy({} as NodePorts["ledger"], { get: () => unavailable }),
  pacing: { acquire: unavailable, report: unavailable },
  aiLimiter: { acquire: unavailable, release: unavailable, budgetMinutes: 60 },
  answers: new Proxy({} as NodePorts["answers"], { get: () => unavailable }),
};
