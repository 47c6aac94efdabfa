import { describe, expect, it } from "vitest";
import { fakeRuntime } from "../__tests__/fake-runtime";
import type { NodeOf } from "../types";
import { renderEmail } from "./render-emails";
import { plainTextOf } from "./markdown";

const node = (body: string, extra: Record<string, unknown> = {}) =>
  ({
    id: "out",
    type: "OUTPUT",
    data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi", body, format: "markdown", unsubscribe: false, ...extra },
  }) as NodeOf<"OUTPUT">;
const rt = fakeRuntime({ src: { rows: [] } });

describe("Markdown bodies", () => {
  it("renders the author's Markdown to HTML and shows interpolated values as the text they are", () => {
    const email = renderEmail(node("# Hello {{item.name}}\n\nYour **plan**: {{item.plan}}\n\n- [Docs](https://example.com/docs)"), rt, {
      email: "a@example.com",
      name: "**Bob** <img src=x onerror=alert(1)>",
      plan: "[click](javascript:alert(1)) & # not a heading",
    }, 0) as { html: string };
    expect(email.html).toContain("<h1>Hello **Bob** &lt;img src=x onerror=alert(1)&gt;</h1>");
    expect(email.html).toContain("<strong>plan</strong>: [click](javascript:alert(1)) &amp; # not a heading");
    expect(email.html).toContain('<a href="https://example.com/docs">Docs</a>');
    expect(email.html).not.toContain("<img");
    expect(email.html).not.toContain('href="javascript');
  });

  it("makes a plain-text part from the HTML", () => {
    const text = plainTextOf("<h1>Hello</h1><p>Read <a href=\"https://example.com/docs\">the docs</a>.</p>");
    expect(text).toBe("HELLO\n\nRead the docs [https://example.com/docs].");
  });

  it("escapes values in replyTo-free html bodies as before and refuses a replyTo that is not an address", () => {
    const bad = renderEmail(node("x", { replyTo: "{{item.reply}}" }), rt, { email: "a@example.com", reply: "not an address" }, 3);
    expect(bad).toBe('item 3: "replyTo" rendered as "not an address", which is not one valid email address');
  });
});
