import { describe, expect, it } from "vitest";
import { fakeRuntime } from "../__tests__/fake-runtime";
import type { NodeOf } from "../types";
import { renderAllEmails, renderEmail, validateAllEmails } from "./render-emails";

const node = (data: Partial<{ to: string; subject: string; body: string; format: "text" | "html" }>) =>
  ({
    id: "out",
    type: "OUTPUT",
    data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "Dear {{item.name}}", ...data },
  }) as NodeOf<"OUTPUT">;
const rt = fakeRuntime({ src: { rows: [] } });

describe("OUTPUT rendering", () => {
  it("renders text emails per item, the address trimmed and lower-cased, with its unsubscribe link", () => {
    expect(renderEmail(node({}), rt, { email: " Ann@Example.com ", name: "Ann" }, 0)).toEqual({
      itemIndex: 0,
      to: "ann@example.com",
      subject: "Hi Ann",
      text: "Dear Ann",
      unsubscribeUrl: expect.stringMatching(/^http:\/\/localhost:3000\/api\/unsubscribe\/[\w-]+\.[\w-]+$/),
    });
  });

  it("puts the unsubscribe link in the body with {{unsubscribeUrl}}, and leaves it out of transactional nodes", () => {
    const email = renderEmail(node({ body: "Bye: {{ unsubscribeUrl }}" }), rt, { email: "a@example.com", name: "A" }, 0);
    expect(email).toMatchObject({ text: `Bye: ${(email as { unsubscribeUrl: string }).unsubscribeUrl}` });
    const transactional = { ...node({}), data: { ...node({}).data, unsubscribe: false } } as NodeOf<"OUTPUT">;
    expect(renderEmail(transactional, rt, { email: "a@example.com", name: "A" }, 0)).not.toHaveProperty("unsubscribeUrl");
  });

  it("escapes interpolated values in HTML bodies", () => {
    const email = renderEmail(node({ format: "html", body: "<p>{{item.name}}</p>" }), rt, { email: "a@example.com", name: "<script>" }, 0);
    expect(email).toMatchObject({ html: "<p>&lt;script&gt;</p>" });
  });

  it("refuses anything but exactly one address, and line breaks in to or subject", () => {
    for (const to of ["a@example.com, b@example.com", "Ann <a@example.com>", "nobody", "a@example.com\nBcc: x@example.com"]) {
      expect(typeof renderEmail(node({}), rt, { email: to, name: "x" }, 3)).toBe("string");
    }
    expect(renderEmail(node({}), rt, { email: "a@example.com", name: "x\r\nBcc: y@example.com" }, 1)).toMatch(/line break/);
  });

  it("reports how many emails failed and sends none", async () => {
    const items = [
      { email: "a@example.com", name: "A" },
      { email: "bad", name: "B" },
      { name: "C" },
    ];
    await expect(validateAllEmails(node({}), rt, items)).rejects.toThrow(/^2 of 3 emails could not be rendered, so none was sent: .*item 1.*item 2/);
    await expect(validateAllEmails(node({}), rt, items.slice(0, 1))).resolves.toHaveLength(1);
  });

  it("renders many items with one context: each email its own item and index, errors naming their field", async () => {
    const items = Array.from({ length: 3_000 }, (_, i) => ({ email: `p${i}@example.com`, name: i % 2 ? `P${i}` : "" }));
    const emails = await renderAllEmails(node({ body: "{{item.name}}#{{unsubscribeUrl}}" }), rt, items);
    expect(emails).toHaveLength(3_000);
    expect(emails[2_999]).toMatchObject({ itemIndex: 2_999, to: "p2999@example.com", subject: "Hi P2999" });
    expect(emails[2_998]).toMatchObject({ itemIndex: 2_998, to: "p2998@example.com", subject: "Hi " }); // an empty name: nothing left from the item before
    expect((emails[7] as { text: string }).text).toBe(`P7#${emails[7].unsubscribeUrl}`);
    expect(emails[7].unsubscribeUrl).not.toBe(emails[9].unsubscribeUrl);
    // {{unsubscribeUrl}} exists only in the body: in the subject it is refused, for every item.
    await expect(renderAllEmails(node({ subject: "{{unsubscribeUrl}}" }), rt, items.slice(0, 2))).rejects.toThrow(/2 of 2 .*subject.*unsubscribeUrl only exists/);
  });
});
