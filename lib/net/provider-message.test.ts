import { describe, expect, it } from "vitest";
import { providerErrorText, sanitizeProviderMessage } from "./provider-message";

describe("sanitizeProviderMessage", () => {
  it("keeps a plain sentence", () => {
    expect(sanitizeProviderMessage("The model `gpt-x` does not exist")).toBe("The model `gpt-x` does not exist");
  });
  it("drops paths, SQL, markup and control characters and bounds the length", () => {
    const text = sanitizeProviderMessage(
      "<html><body>Error</body></html> at /srv/app/node_modules/x/index.js: select * from users where id = 1\u0000",
    );
    expect(text).not.toMatch(/\/srv|select|<html|\u0000/);
    expect(sanitizeProviderMessage("x".repeat(1000)).length).toBe(240);
  });
  it("names the provider and its code", () => {
    expect(providerErrorText("Resend", 422, "Invalid `to` field")).toBe("Resend 422: Invalid `to` field");
    expect(sanitizeProviderMessage(undefined)).toBe("no details given");
  });
});
