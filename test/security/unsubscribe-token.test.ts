// Unsubscribe links carry an opaque token: neither the account id nor the address can be read from it, it cannot be
// altered, and links in emails sent before (signed, readable tokens) keep working.
import { createHmac, hkdfSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { getConfig } from "@/lib/config";
import { readUnsubscribeToken, unsubscribeToken, unsubscribeUrl } from "@/lib/email/unsubscribe-token";

const ACCOUNT = "usr_AbCdEfGhIjKlMnOpQrStUv";
const EMAIL = "reader@example.com";

function everyDecoding(token: string): string {
  return token.split(/[.]/).map((part) => Buffer.from(part, "base64url").toString("latin1")).join(" ");
}

describe("unsubscribe tokens", () => {
  it("shows neither the account id nor the address, in the token or the link", () => {
    const token = unsubscribeToken(ACCOUNT, EMAIL);
    const url = unsubscribeUrl(ACCOUNT, EMAIL);
    for (const text of [token, url, everyDecoding(token)]) {
      expect(text).not.toContain(ACCOUNT);
      expect(text).not.toContain("usr_");
      expect(text).not.toContain("reader");
    }
    expect(readUnsubscribeToken(token)).toEqual({ accountId: ACCOUNT, email: EMAIL });
    expect(unsubscribeToken(ACCOUNT, EMAIL)).toBe(token); // one link per account and address
    expect(unsubscribeToken(ACCOUNT, "other@example.com")).not.toBe(token);
  });

  it("refuses altered, truncated and foreign tokens", () => {
    const token = unsubscribeToken(ACCOUNT, EMAIL);
    const flipped = token.slice(0, 10) + (token[10] === "A" ? "B" : "A") + token.slice(11);
    for (const bad of [flipped, token.slice(0, -2), `${token}A`, "u2.", "u2.AAAA", "x.y", ""]) {
      expect(readUnsubscribeToken(bad), bad).toBeNull();
    }
  });

  it("still reads the signed tokens of emails sent before", () => {
    const key = Buffer.from(hkdfSync("sha256", getConfig().authSecret, "flowmail", "unsubscribe-token-v1", 32));
    const payload = Buffer.from(`${ACCOUNT}\n${EMAIL}`).toString("base64url");
    const legacy = `${payload}.${createHmac("sha256", key).update(payload).digest().subarray(0, 16).toString("base64url")}`;
    expect(readUnsubscribeToken(legacy)).toEqual({ accountId: ACCOUNT, email: EMAIL });
    expect(readUnsubscribeToken(`${payload}.AAAAAAAAAAAAAAAAAAAAAA`)).toBeNull();
  });
});
