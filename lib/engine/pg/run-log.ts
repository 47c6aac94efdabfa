import "server-only";
import type { Db } from "@/db/client";
import { runLogs } from "@/db/schema";

import type { LogLevel } from "@/lib/nodes/types";

export type { LogLevel };

/** Appends one line to the run's log (shown in GET /api/workflows/runs/:runId). */
export async function appendRunLog(db: Db, runId: string, level: LogLevel, message: string, nodeId?: string): Promise<void> {
  await db.insert(runLogs).values({ runId, level, message, nodeId: nodeId ?? null });
}
