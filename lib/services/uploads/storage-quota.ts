import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db, type Tx } from "@/db/client";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";

const MIB = 1024 * 1024;

/**
 * The bytes an account keeps: its uploaded CSVs (not deleted; Drive caches excluded, they are the server's copies)
 * plus the declared length of every resumable upload still receiving (a reservation: 60 tus uploads of 50 MiB each
 * would otherwise hold 3 GiB of promises).
 */
export async function storageUsed(db: Db | Tx, accountId: string): Promise<number> {
  const [row] = await execRows<{ used: number | string }>(
    db,
    sql`select
          coalesce((select sum(size_bytes) from uploads where account_id = ${accountId} and deleted_at is null and source = 'upload'), 0)
        + coalesce((select sum(length) from tus_uploads where account_id = ${accountId} and state = 'receiving' and expires_at > now()), 0)
        as used`,
  );
  return Number(row?.used ?? 0);
}

/** 413 `payload_too_large` when `incomingBytes` more would take the account past UPLOAD_QUOTA_BYTES. */
export async function assertStorageQuota(db: Db | Tx, accountId: string, incomingBytes: number): Promise<void> {
  const quota = getConfig().uploadQuotaBytes;
  const used = await storageUsed(db, accountId);
  if (used + incomingBytes <= quota) return;
  throw new AppError(
    "payload_too_large",
    `Your uploads would take ${Math.ceil((used + incomingBytes) / MIB)} MiB of the ${Math.floor(quota / MIB)} MiB this account may keep: delete uploads you no longer need first.`,
  );
}
