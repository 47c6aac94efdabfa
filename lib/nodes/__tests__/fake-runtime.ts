import type { NodeRuntime } from "../types";

/** A runtime over fixed upstream outputs, for unit tests of executors that need no database. */
export function fakeRuntime(outputs: Record<string, Record<string, unknown>>, skipped: string[] = []): NodeRuntime {
  const state = (id: string) =>
    outputs[id] ? { status: "SUCCESS" as const, output: outputs[id] } : skipped.includes(id) ? { status: "SKIPPED" as const, output: null } : undefined;
  return {
    db: undefined as never,
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
