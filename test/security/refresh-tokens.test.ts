// Issue 20, points 7 and 12: refresh tokens slide 30 days but never outlive REFRESH_TOKEN_MAX_DAYS (default 90) from
// the original sign-in; two tabs refreshing with one token at the same moment both stay signed in, while a rotated
// token reused after the few-second grace still revokes its whole family.
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { POST as login } from "@/app/api/auth/login/route";
import { POST as refresh } from "@/app/api/auth/refresh-token/route";
import { getDb } from "@/db/client";
import { mailboxMessages, refreshTokens } from "@/db/schema";
import { setClock } from "@/lib/clock";
import { resetConfig } from "@/lib/config";
import { hashToken } from "@/lib/crypto";
import { REFRESH_REUSE_GRACE_SECONDS } from "@/lib/services/accounts/sessions";
import { codeFromSubject, post, registerOk, uniqueEmail, verifyOk } from "@/test/accounts/helpers";

const PASSWORD = "correct horse battery";
const DAY = 24 * 3600_000;

afterEach(() => {
  setClock();
  delete process.env.REFRESH_TOKEN_MAX_DAYS;
  resetConfig();
});

function fakeClock(start = Date.now()) {
  let t = start;
  setClock(() => t);
  return { advance: (ms: number) => (t += ms) };
}

async function signIn(): Promise<string> {
  const email = uniqueEmail("refresh");
  await registerOk(email, PASSWORD);
  const db = await getDb();
  const [mail] = await db.select().from(mailboxMessages).where(eq(mailboxMessages.to, email));
  await verifyOk(email, codeFromSubject(mail.subject));
  const res = await post(login, "/api/auth/login", { email, password: PASSWORD });
  expect(res.status).toBe(200);
  return res.body.refreshToken;
}

const rotate = (refreshToken: string) => post(refresh, "/api/auth/refresh-token", { refreshToken });

describe("refresh token lifetime", () => {
  it("ends a sign-in 90 days after it began however often it is refreshed", async () => {
    const clock = fakeClock();
    let token = await signIn();
    for (let day = 20; day <= 80; day += 20) {
      clock.advance(20 * DAY);
      const res = await rotate(token);
      expect(res.status, `day ${day}`).toBe(200);
      token = res.body.refreshToken;
    }
    // day 100 would be too late; the last token (issued day 80) expires with the sign-in at day 90
    const db = await getDb();
    const [row] = await db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, hashToken(token)));
    const [first] = await db.select().from(refreshTokens).where(eq(refreshTokens.familyId, row.familyId)).orderBy(refreshTokens.createdAt).limit(1);
    expect(row.expiresAt.getTime()).toBe(first.createdAt.getTime() + 90 * DAY);
    clock.advance(10 * DAY + 1000);
    const late = await rotate(token);
    expect(late.status).toBe(401);
    expect(late.body.code).toBe("invalid_token");
  });

  it("follows REFRESH_TOKEN_MAX_DAYS", async () => {
    process.env.REFRESH_TOKEN_MAX_DAYS = "7";
    resetConfig();
    const clock = fakeClock();
    const token = await signIn();
    clock.advance(6 * DAY);
    const res = await rotate(token);
    expect(res.status).toBe(200);
    clock.advance(DAY);
    expect((await rotate(res.body.refreshToken)).status).toBe(401);
  });
});

describe("two tabs refreshing at once", () => {
  it("gives both a working pair in one family; a reuse after the grace still revokes the family", async () => {
    const clock = fakeClock();
    const token = await signIn();
    const [a, b] = await Promise.all([rotate(token), rotate(token)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const nextA = await rotate(a.body.refreshToken);
    const nextB = await rotate(b.body.refreshToken);
    expect([nextA.status, nextB.status]).toEqual([200, 200]);

    clock.advance((REFRESH_REUSE_GRACE_SECONDS + 1) * 1000);
    expect((await rotate(token)).status).toBe(401); // a leaked token: the family ends
    expect((await rotate(nextA.body.refreshToken)).status).toBe(401);
    expect((await rotate(nextB.body.refreshToken)).status).toBe(401);
  });

  it("answers the late tab within the grace even when it arrives a moment after the winner", async () => {
    const clock = fakeClock();
    const token = await signIn();
    expect((await rotate(token)).status).toBe(200);
    clock.advance(REFRESH_REUSE_GRACE_SECONDS * 1000 - 500);
    const late = await rotate(token);
    expect(late.status).toBe(200);
    expect((await rotate(late.body.refreshToken)).status).toBe(200);
  });
});
