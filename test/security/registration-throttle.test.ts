// Sign-up emails a code to any address its sender names, so it is throttled per client address and across all
// clients, and the code email never repeats a name that looks like a link or an address.
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { POST as register } from "@/app/api/auth/register/route";
import { getDb } from "@/db/client";
import { accounts, mailboxMessages } from "@/db/schema";
import { CLIENT_ADDRESS_HEADER, stampedClientAddress } from "@/lib/auth/client-address";
import { setClock } from "@/lib/clock";
import { resetConfig } from "@/lib/config";
import { greetingName } from "@/lib/email/otp-email";
import { post, uniqueEmail } from "@/test/accounts/helpers";

const PASSWORD = "correct horse battery";
const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: stampedClientAddress(address) });
const signUp = (address: string, fullName = "Ada Lovelace", email = uniqueEmail("victim")) =>
  post(register, "/api/auth/register", { email, password: PASSWORD, fullName }, from(address));

afterEach(() => {
  setClock();
  delete process.env.REGISTRATION_GLOBAL_LIMIT;
  delete process.env.REGISTRATION_ADDRESS_LIMIT;
  resetConfig();
});

async function mailTo(email: string) {
  const db = await getDb();
  return db.select().from(mailboxMessages).where(eq(mailboxMessages.to, email));
}

describe("registration throttle", () => {
  it("accepts 10 sign-ups per client address per hour, then 429 with Retry-After; other clients are not blocked", async () => {
    const attacker = "203.0.113.50";
    for (let i = 0; i < 10; i++) expect((await signUp(attacker)).status).toBe(201);
    const email = uniqueEmail("victim");
    const blocked = await signUp(attacker, "Ada Lovelace", email);
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe("rate_limited");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(3000);
    expect(blocked.headers.get("ratelimit-limit")).toBe("10");
    // Nothing was created or sent for the refused one.
    const db = await getDb();
    expect(await db.select().from(accounts).where(eq(accounts.email, email))).toHaveLength(0);
    expect(await mailTo(email)).toHaveLength(0);
    expect((await signUp("198.51.100.20")).status).toBe(201);
  });

  it("counts attempts on taken addresses too (no free probing)", async () => {
    process.env.REGISTRATION_ADDRESS_LIMIT = "3";
    resetConfig();
    const email = uniqueEmail("taken");
    expect((await signUp("203.0.113.60", "Ada", email)).status).toBe(201);
    expect((await signUp("203.0.113.60", "Ada", email)).status).toBe(409);
    expect((await signUp("203.0.113.60", "Ada", email)).status).toBe(409);
    expect((await signUp("203.0.113.60", "Ada", email)).status).toBe(429);
  });

  it("caps sign-ups across all client addresses (REGISTRATION_GLOBAL_LIMIT)", async () => {
    process.env.REGISTRATION_GLOBAL_LIMIT = "5";
    resetConfig();
    const later = Date.now() + 2 * 3600_000; // the other tests' sign-ups have left the window
    setClock(() => later);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => signUp(`192.0.2.${i + 1}`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body.detail).toMatch(/unusual volume/);
  });
});

describe("code email greeting", () => {
  it("does not repeat a name carrying a link or a domain at the top of the code email", async () => {
    const email = uniqueEmail("victim");
    const res = await signUp("198.51.100.30", "WIN A PRIZE → https://prize.example/claim", email);
    expect(res.status).toBe(201);
    const [mail] = await mailTo(email);
    expect(mail.text!.split("\n")[0]).toBe("Hello,");
    expect(mail.text).not.toMatch(/prize|https?:/i);
    expect(mail.html).not.toMatch(/prize|https?:/i);
  });

  it("greets ordinary names, and refuses link-looking ones", () => {
    for (const name of ["Ada Lovelace", "J.R.R. Tolkien", "Dr. Jane Doe-Smith", "Zoë O'Brien", "李小龍"]) {
      expect(greetingName(name)).toBe(name);
    }
    for (const name of ["visit prize.example", "www.win", "me@evil.example", "ftp://x", "bit.ly/x", "claim at evil．com"]) {
      expect(greetingName(name)).toBeNull();
    }
  });
});
