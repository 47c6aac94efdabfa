// Throttles are one atomic increment-and-check over a sliding window (parallel guesses and
// guesses straddling a clock boundary get no more than the limit), sign-in failures are also limited per client
// address, and wrong sign-up codes are capped per account per hour across resends.
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { POST as login } from "@/app/api/auth/login/route";
import { POST as resendOtp } from "@/app/api/auth/resend-otp/route";
import { POST as verifyEmail } from "@/app/api/auth/verify-email/route";
import { getDb } from "@/db/client";
import { mailboxMessages } from "@/db/schema";
import { CLIENT_ADDRESS_HEADER, stampedClientAddress } from "@/lib/auth/client-address";
import { passwordHashPolicy } from "@/lib/auth/passwords";
import { setClock } from "@/lib/clock";
import { resetConfig } from "@/lib/config";
import { codeFromSubject, post, registerOk, uniqueEmail, verifyOk, wrongCode } from "@/test/accounts/helpers";

const PASSWORD = "correct horse battery";

// These tests count attempts: every sign-in verifies one hash (a wrong password, an unknown address against a dummy
// hash), so the hash's cost is lowered here (1 MiB, 1 pass); test/accounts/auth-api.test.ts keeps the real cost.
Object.assign(passwordHashPolicy, { memoryCost: 1024, timeCost: 1 });

afterEach(() => {
  setClock();
  delete process.env.TRUST_PROXY;
  resetConfig();
});

function fakeClock(start: number) {
  let t = start;
  setClock(() => t);
  return { advance: (ms: number) => (t += ms) };
}

async function verifiedAccount(): Promise<string> {
  const email = uniqueEmail("throttle");
  await registerOk(email, PASSWORD);
  await verifyOk(email, await latestCode(email));
  return email;
}

async function latestCode(email: string): Promise<string> {
  const db = await getDb();
  const rows = await db.select().from(mailboxMessages).where(eq(mailboxMessages.to, email));
  rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  return codeFromSubject(rows[rows.length - 1].subject);
}

const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: stampedClientAddress(address) });

describe("sign-in throttle", () => {
  it("evaluates exactly 10 of 59 wrong passwords sent in parallel", async () => {
    const email = await verifiedAccount();
    const results = await Promise.all(
      Array.from({ length: 59 }, (_, i) => post(login, "/api/auth/login", { email, password: `wrong guess ${i} here` })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(49);
    expect((await post(login, "/api/auth/login", { email, password: PASSWORD })).status).toBe(429);
  });

  it("gives no fresh allowance at a clock-aligned 15-minute boundary (sliding window)", async () => {
    const boundary = Math.ceil(Date.now() / 900_000) * 900_000 + 900_000;
    const clock = fakeClock(boundary - 2000);
    const email = await verifiedAccount();
    for (let i = 0; i < 10; i++) expect((await post(login, "/api/auth/login", { email, password: `wrong ${i} attempt` })).status).toBe(401);
    clock.advance(4000); // two seconds past the boundary
    const res = await post(login, "/api/auth/login", { email, password: "one more wrong guess" });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(800);
    clock.advance(15 * 60_000 + 90_000); // the failures left the window
    expect((await post(login, "/api/auth/login", { email, password: PASSWORD })).status).toBe(200);
  });

  it("limits failures per client address across many accounts (50 per 15 minutes), whatever X-Forwarded-For says", async () => {
    const attacker = "203.0.113.7";
    for (let i = 0; i < 50; i++) {
      const res = await post(login, "/api/auth/login", { email: uniqueEmail("spray"), password: "Winter2026!" }, {
        ...from(attacker), "x-forwarded-for": `198.51.100.${i}`,
      });
      expect(res.status).toBe(401);
    }
    const blocked = await post(login, "/api/auth/login", { email: uniqueEmail("spray"), password: "Winter2026!" }, from(attacker));
    expect(blocked.status).toBe(429);
    expect(blocked.body.detail).toMatch(/network/);
    // The real owner of an account signs in from elsewhere; the stamp cannot be forged without the process's token.
    const email = await verifiedAccount();
    expect((await post(login, "/api/auth/login", { email, password: PASSWORD }, from("192.0.2.1"))).status).toBe(200);
    // A stamp without this process's token names no address (a server's hook overwrites the header anyway), so nobody
    // can pin failures on another client's address: this one counts for no address at all.
    const forged = await post(login, "/api/auth/login", { email: uniqueEmail("spray"), password: "Winter2026!" }, {
      [CLIENT_ADDRESS_HEADER]: "0000 192.0.2.99",
    });
    expect(forged.status).toBe(401);
  });

  it("takes the last X-Forwarded-For entry only with TRUST_PROXY=true", async () => {
    process.env.TRUST_PROXY = "true";
    resetConfig();
    const proxy = from("10.0.0.2"); // every request arrives from the proxy's socket
    for (let i = 0; i < 50; i++) {
      const res = await post(login, "/api/auth/login", { email: uniqueEmail("proxied"), password: "Winter2026!" }, {
        ...proxy, "x-forwarded-for": `1.2.3.4, 203.0.113.${i % 2 ? 8 : 9}`,
      });
      expect(res.status).toBe(401);
    }
    const same = await post(login, "/api/auth/login", { email: uniqueEmail("proxied"), password: "Winter2026!" }, {
      ...proxy, "x-forwarded-for": "203.0.113.8",
    });
    expect(same.status).toBe(401); // 25 failures from .8 so far: other clients behind the proxy are not blocked
  });
});

describe("wrong sign-up codes across resends", () => {
  it("answers 429 for the right code after 10 wrong ones spread over three codes, until the hour has passed", async () => {
    const clock = fakeClock(Date.now());
    const email = uniqueEmail("otp");
    await registerOk(email, PASSWORD);
    const wrongTries = async (n: number) => {
      const code = await latestCode(email);
      for (let i = 0; i < n; i++) {
        expect((await post(verifyEmail, "/api/auth/verify-email", { email, otp: wrongCode(code) })).status).toBe(400);
      }
    };
    await wrongTries(4);
    clock.advance(61_000);
    expect((await post(resendOtp, "/api/auth/resend-otp", { email })).status).toBe(202);
    await wrongTries(4);
    clock.advance(61_000);
    expect((await post(resendOtp, "/api/auth/resend-otp", { email })).status).toBe(202);
    await wrongTries(2);
    const right = await post(verifyEmail, "/api/auth/verify-email", { email, otp: await latestCode(email) });
    expect(right.status).toBe(429);
    expect(right.body.code).toBe("rate_limited");
    const wait = Number(right.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(3000);
    clock.advance(wait * 1000);
    clock.advance(61_000);
    expect((await post(resendOtp, "/api/auth/resend-otp", { email })).status).toBe(202);
    await verifyOk(email, await latestCode(email));
  });
});
