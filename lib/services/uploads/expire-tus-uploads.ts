import "server-only";
import { lt, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { tusUploads } from "@/db/schema";

/**
 * Removes tus uploads past their 24 h (unfinished ones with their received pieces, and the record of finished ones;
 * the uploads they became stay). Called by the periodic sweep; returns how many went.
 */
export async function expireTusUploads(): Promise<number> {
  const db = await getDb();
  const removed = await db
    .delete(tusUploads)
    .where(lt(tusUploads.expiresAt, sql`now()`))
    .returning({ id: tusUploads.id });
  return removed.length;
}
