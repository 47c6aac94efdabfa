// Forgot password / reset password: the same answer for every address, a code of its own kind (a sign-up code does
// not reset a password), the sign-up code rules (five tries, throttled emails), and every earlier token revoked.
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { GET as getAccount } from "@/app/api/account/route";
import { POST as forgot } from "@/app/api/auth/forgot-password/route";
import { POST as login } from "@/app/api/auth/login/route";
import { POST as refresh } from "@/app/api/auth/refresh-token/route";
import { POST as reset } from "@/app/api/auth/reset-password/route";
import { getDb } from "@/db/client";
import { mailboxMessages } from "@/db/schema";
import { setClock } from "@/lib/clock";
import { call } from "@/test/support/http";
import { post, registerOk, uniqueEmail, verifyOk, wrongCode } from "@/test/accounts/helpers";

const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "violet lantern drifting seaward";

afterEach(() => setClock());

function fakeClock(start = Date.now()) {
  let t = start;
  setClock(() => t);
  return { advance: (ms: number) => (t += ms) };
}

async function mails(email: string) {
  const db = await getDb();
  const rows = await db.select().from(mailboxMessages).where(eq(mailboxMessages.to, email));
  return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

const resetCode = async (email: string) => {
  const last = (await mails(email)).at(-1)!;
  const match = /^Your Flowmail password reset code: (\d{6})$/.exec(last.subject);
  expect(match, last.subject).not.toBeNull();
  return match![1];
};

async function verifiedAccount() {
  const email = uniqueEmail("reset");
  await registerOk(email, PASSWORD);
  const signUpCode = /(\d{6})$/.exec((await mails(email))[0].subject)![1];
  const session = (await verifyOk(email, signUpCode)).body;
  return { email, signUpCode, session };
}

describe("forgot password", () => {
  it("answers the same for a verified, an unverified and an unknown address; only the verified one gets a reset code", async () => {
    const clock = fakeClock();
    const { email } = await verifiedAccount();
    const unverified = uniqueEmail("unverified");
    await registerOk(unverified, PASSWORD);
    clock.advance(61_000); // past the sign-up codes' cooldown
    const unknown = uniqueEmail("nobody");
    const answers = await Promise.all([email, unverified, unknown].map((e) => post(forgot, "/api/auth/forgot-password", { email: e })));
    for (const a of answers) expect([a.status, a.body]).toEqual([202, answers[0].body]);
    expect((await mails(email)).at(-1)!.subject).toMatch(/^Your Flowmail password reset code: \d{6}$/);
    expect((await mails(unverified)).map((m) => m.subject).filter((s) => /reset/.test(s))).toHaveLength(0);
    expect(await mails(unknown)).toHaveLength(0);
  });

  it("is throttled like every code email: a second request within 60 s answers 429, known address or not", async () => {
    fakeClock();
    const { email } = await verifiedAccount();
    for (const address of [email, uniqueEmail("nobody")]) {
      // The verified account's sign-up code was sent a moment ago: its cooldown already runs.
      if (address !== email) expect((await post(forgot, "/api/auth/forgot-password", { email: address })).status).toBe(202);
      const again = await post(forgot, "/api/auth/forgot-password", { email: address });
      expect(again.status).toBe(429);
      expect(again.body.code).toBe("rate_limited");
      expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });
});

describe("reset password", () => {
  it("sets the new password with the reset code and revokes every earlier token", async () => {
    const clock = fakeClock();
    const { email, session } = await verifiedAccount();
    clock.advance(61_000);
    expect((await post(forgot, "/api/auth/forgot-password", { email })).status).toBe(202);
    clock.advance(1000);
    const res = await post(reset, "/api/auth/reset-password", { email, otp: await resetCode(email), newPassword: NEW_PASSWORD });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ tokenType: "Bearer", expiresIn: 900 });
    expect((await call(getAccount, { token: res.body.accessToken })).status).toBe(200);
    expect((await call(getAccount, { token: session.accessToken })).status).toBe(401);
    expect((await post(refresh, "/api/auth/refresh-token", { refreshToken: session.refreshToken })).status).toBe(401);
    expect((await post(login, "/api/auth/login", { email, password: PASSWORD })).status).toBe(401);
    expect((await post(login, "/api/auth/login", { email, password: NEW_PASSWORD })).status).toBe(200);
    // The code is used up.
    const again = await post(reset, "/api/auth/reset-password", { email, otp: await resetCode(email), newPassword: `${NEW_PASSWORD} again` });
    expect([again.status, again.body.code]).toEqual([400, "invalid_otp"]);
  });

  it("does not take a sign-up code, a weak password or a wrong code", async () => {
    const clock = fakeClock();
    const { email, signUpCode } = await verifiedAccount();
    clock.advance(61_000);
    await post(forgot, "/api/auth/forgot-password", { email });
    const code = await resetCode(email);
    const viaSignUp = await post(reset, "/api/auth/reset-password", { email, otp: signUpCode === code ? wrongCode(code) : signUpCode, newPassword: NEW_PASSWORD });
    expect([viaSignUp.status, viaSignUp.body.code]).toEqual([400, "invalid_otp"]);
    const weak = await post(reset, "/api/auth/reset-password", { email, otp: code, newPassword: "password1" });
    expect(weak.status).toBe(422);
    expect(weak.body.errors[0].path).toBe("newPassword");
    const unknown = await post(reset, "/api/auth/reset-password", { email: uniqueEmail("nobody"), otp: code, newPassword: NEW_PASSWORD });
    expect([unknown.status, unknown.body.code]).toEqual([400, "invalid_otp"]);
    // The weak try cost no guess: the right code still works.
    expect((await post(reset, "/api/auth/reset-password", { email, otp: code, newPassword: NEW_PASSWORD })).status).toBe(200);
  });

  it("voids the code after 5 wrong tries (429), until a new one is asked for", async () => {
    const clock = fakeClock();
    const { email } = await verifiedAccount();
    clock.advance(61_000);
    await post(forgot, "/api/auth/forgot-password", { email });
    const code = await resetCode(email);
    for (let i = 0; i < 5; i++) {
      expect((await post(reset, "/api/auth/reset-password", { email, otp: wrongCode(code), newPassword: NEW_PASSWORD })).status).toBe(400);
    }
    const right = await post(reset, "/api/auth/reset-password", { email, otp: code, newPassword: NEW_PASSWORD });
    expect([right.status, right.body.code]).toEqual([429, "rate_limited"]);
    clock.advance(61_000);
    await post(forgot, "/api/auth/forgot-password", { email });
    expect((await post(reset, "/api/auth/reset-password", { email, otp: await resetCode(email), newPassword: NEW_PASSWORD })).status).toBe(200);
  });
});
