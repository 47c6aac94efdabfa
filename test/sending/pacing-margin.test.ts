// The spacing of a per-email sender's slots (lib/email/pacing.ts takeSlots): 5 % wider than 1/rate by default (a
// provider's limit counted over a second: SES, Resend), exactly 1/rate for a margin of 1 (SMTP: the account's own rate).
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { pacingPolicy, takeSlots } from "@/lib/email/pacing";
import { createSmtpSender } from "@/lib/email/smtp-sender";

describe("per-email send slots", () => {
  it("are spaced 1/rate times the limiter's margin unless the sender sets its own", async () => {
    const db = await getDb();
    const rate = 500;
    const withMargin = await takeSlots(db, `test:${randomUUID()}`, rate, 10);
    expect(withMargin.spacingMs).toBeCloseTo((1000 * pacingPolicy.marginFactor) / rate, 6);
    expect(pacingPolicy.marginFactor).toBeGreaterThan(1);

    const key = `test:${randomUUID()}`;
    const exact = await takeSlots(db, key, rate, 10, 1);
    expect(exact.spacingMs).toBeCloseTo(1000 / rate, 6);
    // The limiter moved on by exactly 10 slots of 2 ms: the next group starts ~20 ms after the first.
    const [row] = await execRows<{ ahead_ms: number }>(
      db,
      sql`select extract(epoch from (next_at - slot_at)) * 1000 as ahead_ms from email_send_pacing where key = ${key}`,
    );
    expect(Number(row.ahead_ms)).toBeCloseTo(20, 3);
  });

  it("of an SMTP sender keep the account's rate exactly", () => {
    const smtp = createSmtpSender({ host: "127.0.0.1", port: 2525, secure: false, from: "a@example.com" });
    try {
      expect(smtp.pacingMargin).toBe(1);
    } finally {
      smtp.close();
    }
  });
});
