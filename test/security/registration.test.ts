// Issue 20, points 2 and 6: registering an address that has an unverified account changes nothing (a stranger must
// not set the password its owner then verifies), and the most common passwords are refused with a reason.
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { POST as changePassword } from "@/app/api/account/password/route";
import { POST as login } from "@/app/api/auth/login/route";
import { POST as register } from "@/app/api/auth/register/route";
import { getDb } from "@/db/client";
import { accounts, mailboxMessages } from "@/db/schema";
import { call } from "@/test/support/http";
import { codeFromSubject, post, registerOk, uniqueEmail, verifyOk } from "@/test/accounts/helpers";

const OWNER_PASSWORD = "correct horse battery";

async function codesTo(email: string): Promise<string[]> {
  const db = await getDb();
  const rows = await db.select().from(mailboxMessages).where(eq(mailboxMessages.to, email)).orderBy(mailboxMessages.createdAt);
  return rows.map((row) => codeFromSubject(row.subject));
}

describe("pre-verification takeover", () => {
  it("answers 409 email_taken for an unverified address and keeps the owner's password, name and code", async () => {
    const email = uniqueEmail("owner");
    await registerOk(email, OWNER_PASSWORD, "Real Owner");
    const db = await getDb();
    const [before] = await db.select().from(accounts).where(eq(accounts.email, email));
    const codes = await codesTo(email);

    const stranger = await post(register, "/api/auth/register", { email, password: "stranger picks this one", fullName: "Stranger" });
    expect(stranger.status).toBe(409);
    expect(stranger.headers.get("content-type")).toBe("application/problem+json");
    expect(stranger.body.code).toBe("email_taken");
    expect(stranger.body.detail).toMatch(/new code/);

    const [after] = await db.select().from(accounts).where(eq(accounts.email, email));
    expect(after).toEqual(before);
    expect(await codesTo(email)).toEqual(codes); // no new code was sent either
    await verifyOk(email, codes[0]);
    expect((await post(login, "/api/auth/login", { email, password: "stranger picks this one" })).status).toBe(401);
    expect((await post(login, "/api/auth/login", { email, password: OWNER_PASSWORD })).status).toBe(200);
  });
});

describe("common passwords", () => {
  for (const password of ["password", "12345678", "qwertyuiop", "Password123!", "iloveyou"]) {
    it(`refuses "${password}" at registration with a sentence saying why, and creates nothing`, async () => {
      const email = uniqueEmail("weak");
      const res = await post(register, "/api/auth/register", { email, password, fullName: "Weak Password" });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors).toEqual([{ path: "password", code: "weak_password", message: expect.stringMatching(/common|guess/) }]);
      const db = await getDb();
      expect(await db.select().from(accounts).where(eq(accounts.email, email))).toEqual([]);
    });
  }

  it("refuses a password made of the person's own name, and a weak new password on change", async () => {
    const res = await post(register, "/api/auth/register", { email: uniqueEmail("self"), password: "adalovelace", fullName: "Ada Lovelace" });
    expect(res.status).toBe(422);
    const email = uniqueEmail("change");
    await registerOk(email, OWNER_PASSWORD);
    const [code] = await codesTo(email);
    const { body } = await verifyOk(email, code);
    const change = await call(changePassword, {
      method: "POST", path: "/api/account/password", token: body.accessToken,
      json: { currentPassword: OWNER_PASSWORD, newPassword: "qwerty123" },
    });
    expect(change.status).toBe(422);
    expect(change.body.errors[0]).toMatchObject({ path: "newPassword", code: "weak_password" });
    expect((await post(login, "/api/auth/login", { email, password: OWNER_PASSWORD })).status).toBe(200);
  });

  it("accepts a long phrase of plain words", async () => {
    await registerOk(uniqueEmail("phrase"), "purple elephant under bridge");
  });
});
