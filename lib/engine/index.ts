// The run engine, as the rest of the application asks it: callers ask, the engine owns every transition of a run
// (enqueue, derive, cancel, a deleted workflow's runs, schedule slots, claim, execution, finalize, takeover,
// retention). core/ decides without a database, pg/ holds every statement on runs and their rows, drivers/ executes.
import "server-only";

export { enqueueRun, enqueueRunWithToken, type EnqueuedRun, type RunOptions } from "./pg/enqueue-run";
export { enqueueDerivedRun, type DerivedRun, type DeriveRunOptions, type SourceRun } from "./pg/derive-run";
export { cancelRun, type CancelledRun } from "./pg/cancel-run";
export { failPendingRunsOfDeletedWorkflow } from "./pg/workflow-deleted";
export { enqueueDueSlots, SLOT_GRACE_MS, type DueSlotsResult, type EnqueuedSlot } from "./pg/enqueue-due-slots";
export { staleRunningRuns, takeOverStaleRun, workflowsNeedingWake } from "./pg/queue";
export { pruneExpired, type RetentionReport } from "./pg/retention";
export { acquireExecutorLock, releaseExecutorLock } from "./pg/executor-lock";
export { claimAndExecute, executeRun, type Step } from "./core/execute-run";
export { pgEngineDeps } from "./pg-engine";
export { getEmbeddedExecutor, startEmbeddedExecutor, type EmbeddedExecutorOptions } from "./drivers/embedded-executor";
export { wakeWorkflow } from "./drivers/wake";
