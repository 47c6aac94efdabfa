import { expect } from "vitest";
import { POST as register } from "@/app/api/auth/register/route";
import { POST as verifyEmail } from "@/app/api/auth/verify-email/route";
import { call, type CallResult } from "@/test/support/http";

let counter = 0;

/** A fresh address per test, so tests in one file do not share throttles. */
export function uniqueEmail(tag = "user"): string {
  return `${tag}${++counter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
}

export const post = (handler: Parameters<typeof call>[0], path: string, json: unknown, headers?: Record<string, string>) =>
  call(handler, { method: "POST", path, json, headers });

export async function registerOk(email: string, password = "correct horse battery", fullName = "Ada Lovelace") {
  const res = await post(register, "/api/auth/register", { email, password, fullName });
  expect(res.status, res.text).toBe(201);
  return res;
}

/** The 6-digit code of an OTP email subject (`Your Flowmail code: 123456`). */
export function codeFromSubject(subject: string): string {
  const match = /Your Flowmail code: (\d{6})$/.exec(subject);
  expect(match, `subject "${subject}"`).not.toBeNull();
  return match![1];
}

export async function verifyOk(email: string, otp: string): Promise<CallResult> {
  const res = await post(verifyEmail, "/api/auth/verify-email", { email, otp });
  expect(res.status, res.text).toBe(200);
  return res;
}

/** A code that differs from `code` (for wrong tries). */
export const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");
