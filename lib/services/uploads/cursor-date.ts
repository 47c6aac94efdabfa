import { AppError } from "@/lib/http/errors";
import type { Cursor } from "@/lib/http/pagination";

/** The timestamp inside a keyset cursor; a forged or corrupted cursor is a 422, never a 500. */
export function cursorDate(cursor: Cursor): Date {
  const date = new Date(typeof cursor.k === "string" ? cursor.k : Number.NaN);
  if (Number.isNaN(date.getTime())) {
    throw new AppError("validation_failed", "The cursor is not valid: pass `nextCursor` from a previous page.", {
      errors: [{ path: "query.cursor", code: "invalid_cursor", message: "Unknown cursor" }],
    });
  }
  return date;
}
