import type { OutgoingEmail } from "./types";

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/**
 * Anything a mail client could turn into a link, or a reader could take for an address: a scheme, `www.`, an email
 * address, or a dotted host name (`prize.example`, `bit.ly`). Sign-up lets anyone put any name on a code email sent to
 * any address, so a name that looks like this is not repeated in it.
 */
const LINK_LIKE = /[a-z][a-z0-9+.-]*:\/\/|www\.|@|[\p{L}\p{N}-]+(?:\.|\uFF0E|\u3002)[\p{L}]{2,}/iu;

/** The name to greet with, or null when it looks like a link or an address (the email then says "Hello"). */
export function greetingName(fullName: string): string | null {
  const name = fullName.trim();
  return name && !LINK_LIKE.test(name) ? name : null;
}

/**
 * A code email: greets the person by name (unless the name looks like a link: see greetingName), the code in the
 * subject and the body. `purpose` says what the code is for.
 */
export function otpEmail(input: {
  to: string; fullName: string; code: string; ttlMinutes: number; idempotencyKey: string; purpose?: "verify" | "reset";
}): OutgoingEmail {
  const { code, ttlMinutes } = input;
  const name = greetingName(input.fullName);
  if (input.purpose === "reset") return resetEmail(input.to, name, code, ttlMinutes, input.idempotencyKey);
  const text = [
    name ? `Hi ${name},` : "Hello,",
    "",
    `Your Flowmail verification code is ${code}.`,
    `It expires in ${ttlMinutes} minutes. If you did not create a Flowmail account, ignore this email.`,
  ].join("\n");
  const html = `<p>${name ? `Hi ${escapeHtml(name)},` : "Hello,"}</p>
<p>Your Flowmail verification code is <strong style="font-size:20px;letter-spacing:2px">${code}</strong>.</p>
<p>It expires in ${ttlMinutes} minutes. If you did not create a Flowmail account, ignore this email.</p>`;
  return { to: input.to, subject: `Your Flowmail code: ${code}`, text, html, kind: "otp", idempotencyKey: input.idempotencyKey };
}

function resetEmail(to: string, name: string | null, code: string, ttlMinutes: number, idempotencyKey: string): OutgoingEmail {
  const ignore = "If you did not ask to reset your Flowmail password, ignore this email: your password stays as it is.";
  const text = [
    name ? `Hi ${name},` : "Hello,",
    "",
    `Your Flowmail password reset code is ${code}.`,
    `It expires in ${ttlMinutes} minutes. ${ignore}`,
  ].join("\n");
  const html = `<p>${name ? `Hi ${escapeHtml(name)},` : "Hello,"}</p>
<p>Your Flowmail password reset code is <strong style="font-size:20px;letter-spacing:2px">${code}</strong>.</p>
<p>It expires in ${ttlMinutes} minutes. ${ignore}</p>`;
  return { to, subject: `Your Flowmail password reset code: ${code}`, text, html, kind: "otp", idempotencyKey };
}
