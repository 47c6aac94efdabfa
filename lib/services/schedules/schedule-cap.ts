import "server-only";
import { and, count, eq, isNotNull, isNull, ne } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import { workflows } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";

/**
 * An account may keep at most SCHEDULES_PER_ACCOUNT scheduled workflows: each one starts runs on its own, around the
 * clock, so their number is capped like everything else that spends the server's work. Checked when a workflow gains a
 * schedule (changing an existing one's rule is always allowed); `exceptId` is the workflow being saved.
 */
export async function assertScheduleAllowed(db: Db | Tx, accountId: string, exceptId?: string): Promise<void> {
  const cap = getConfig().schedulesPerAccount;
  const [row] = await db.select({ n: count() }).from(workflows).where(and(
    eq(workflows.accountId, accountId), isNotNull(workflows.schedule), isNull(workflows.deletedAt),
    ...(exceptId ? [ne(workflows.id, exceptId)] : []),
  ));
  if (Number(row?.n ?? 0) >= cap) {
    const message = `At most ${cap} workflows of an account can have a schedule: remove the schedule of another workflow first.`;
    throw new AppError("invalid_schedule", message, { errors: [{ path: "schedule", code: "too_many_schedules", message }] });
  }
}
