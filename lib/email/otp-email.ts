import type { OutgoingEmail } from "./types";

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The verification email: greets the person by name, the code in the subject and the body. */
export function otpEmail(input: { to: string; fullName: string; code: string; ttlMinutes: number; idempotencyKey: string }): OutgoingEmail {
  const { fullName, code, ttlMinutes } = input;
  const text = [
    `Hi ${fullName},`,
    "",
    `Your Flowmail verification code is ${code}.`,
    `It expires in ${ttlMinutes} minutes. If you did not create a Flowmail account, ignore this email.`,
  ].join("\n");
  const html = `<p>Hi ${escapeHtml(fullName)},</p>
<p>Your Flowmail verification code is <strong style="font-size:20px;letter-spacing:2px">${code}</strong>.</p>
<p>It expires in ${ttlMinutes} minutes. If you did not create a Flowmail account, ignore this email.</p>`;
  return { to: input.to, subject: `Your Flowmail code: ${code}`, text, html, kind: "otp", idempotencyKey: input.idempotencyKey };
}
