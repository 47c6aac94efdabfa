// Rendered recipients and subjects: every character a mail system may read as a line end is refused (not only CR and
// LF), and a recipient is plain ASCII without source-routing `%`/`!` forms, control or zero-width characters.
import { describe, expect, it } from "vitest";
import { fakeRuntime } from "@/lib/nodes/__tests__/fake-runtime";
import { renderEmail } from "@/lib/nodes/output/render-emails";
import type { NodeOf } from "@/lib/nodes/types";
import { EMAIL_ADDRESS } from "@/lib/schemas/email-address";

const node = { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "x" } } as NodeOf<"OUTPUT">;
const rt = fakeRuntime({ src: { rows: [] } });

describe("subjects", () => {
  it("refuses NEL, U+2028, U+2029, VT, FF and other control characters", () => {
    for (const bad of ["\u0085", "\u2028", "\u2029", "\u000b", "\u000c", "\u0000", "\u001b", "\u009b"]) {
      const result = renderEmail(node, rt, { email: "a@example.com", name: `x${bad}Bcc: y@example.com` }, 0);
      expect(result, JSON.stringify(bad)).toMatch(/line break or a control character/);
    }
    expect(renderEmail(node, rt, { email: "a@example.com", name: "Ann\tand Bob — ünïcode ✓" }, 0)).toMatchObject({ subject: "Hi Ann\tand Bob — ünïcode ✓" });
  });
});

describe("recipients", () => {
  it("refuses control, zero-width and routing characters", () => {
    for (const to of [
      "a\u200b@example.com", "a\u200d@example.com", "a\ufeff@example.com", "a\u0001@example.com", "a\u0085@example.com",
      "a%b@example.com", "a!b@example.com", "host!user@example.com", "user%relay.example@example.com", ".a@example.com", "a..b@example.com",
    ]) {
      expect(EMAIL_ADDRESS.test(to), JSON.stringify(to)).toBe(false);
      expect(typeof renderEmail(node, rt, { email: to, name: "x" }, 0)).toBe("string");
    }
  });

  it("keeps ordinary addresses", () => {
    for (const to of ["a@example.com", "first.last+tag@sub.example.co.uk", "o'brien@example.ie", "x_y-z@example.com"]) {
      expect(EMAIL_ADDRESS.test(to), to).toBe(true);
    }
  });
});
