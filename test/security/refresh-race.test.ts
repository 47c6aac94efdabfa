// Several requests refreshing one token at once all stay signed in: the grace after a rotation is measured on the
// database's clock, so a request that started before the winning rotation (or on an instance whose clock is behind)
// but reached the row after it is a racing tab, not a reuse that revokes the family.
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { POST as login } from "@/app/api/auth/login/route";
import { POST as refresh } from "@/app/api/auth/refresh-token/route";
import { getDb } from "@/db/client";
import { mailboxMessages, refreshTokens } from "@/db/schema";
import { setClock } from "@/lib/clock";
import { hashToken } from "@/lib/crypto";
import { REFRESH_REUSE_GRACE_SECONDS } from "@/lib/services/accounts/sessions";
import { codeFromSubject, post, registerOk, uniqueEmail, verifyOk } from "@/test/accounts/helpers";

const PASSWORD = "correct horse battery";

afterEach(() => setClock());

async function signIn(): Promise<{ email: string; refreshToken: string }> {
  const email = uniqueEmail("race");
  await registerOk(email, PASSWORD);
  const db = await getDb();
  const [mail] = await db.select().from(mailboxMessages).where(eq(mailboxMessages.to, email));
  await verifyOk(email, codeFromSubject(mail.subject));
  const res = await post(login, "/api/auth/login", { email, password: PASSWORD });
  expect(res.status).toBe(200);
  return { email, refreshToken: res.body.refreshToken };
}

const rotate = (refreshToken: string) => post(refresh, "/api/auth/refresh-token", { refreshToken });

async function familyRows(refreshToken: string) {
  const db = await getDb();
  const [row] = await db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, hashToken(refreshToken)));
  return db.select().from(refreshTokens).where(eq(refreshTokens.familyId, row.familyId));
}

describe("concurrent refreshes of one token", () => {
  it("never revokes the family when the later requests read an earlier time than the winner (skewed instances)", async () => {
    const { refreshToken } = await signIn();
    // Each request reads the time once, each 40 ms earlier than the one before: as if every request landed on an
    // instance whose clock is a little further behind. The first one sent wins the rotation.
    let reads = 0;
    const base = Date.now();
    setClock(() => base - 40 * reads++);
    const results = await Promise.all(Array.from({ length: 5 }, () => rotate(refreshToken)));
    setClock();
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    for (const r of results) expect((await rotate(r.body.refreshToken)).status).toBe(200);
    expect((await familyRows(refreshToken)).filter((row) => row.revokedAt)).toHaveLength(0);
  });

  it("gives all five a working pair, round after round", async () => {
    const { refreshToken } = await signIn();
    let token = refreshToken;
    for (let round = 0; round < 25; round++) {
      const results = await Promise.all(Array.from({ length: 5 }, () => rotate(token)));
      expect(results.map((r) => r.status), `round ${round}`).toEqual([200, 200, 200, 200, 200]);
      token = results[round % 5].body.refreshToken;
    }
    const rows = await familyRows(refreshToken);
    expect(rows.filter((row) => row.revokedAt)).toHaveLength(0);
    expect(rows).toHaveLength(1 + 25 * 5);
  });

  it("still revokes the family, with revoked_at after rotated_at, when a rotated token comes back after the grace", async () => {
    const { refreshToken } = await signIn();
    expect((await rotate(refreshToken)).status).toBe(200);
    const later = Date.now() + (REFRESH_REUSE_GRACE_SECONDS + 1) * 1000;
    setClock(() => later);
    expect((await rotate(refreshToken)).status).toBe(401);
    const rows = await familyRows(refreshToken);
    const first = rows.find((row) => row.tokenHash === hashToken(refreshToken))!;
    expect(rows.every((row) => row.revokedAt)).toBe(true);
    expect(first.revokedAt!.getTime()).toBeGreaterThan(first.rotatedAt!.getTime());
  });
});
