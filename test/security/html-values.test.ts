// A value from a CSV row or an AI answer placed in an attribute of an HTML or Markdown body cannot become a script
// URL or add attributes: URL attributes holding data are checked (http, https, mailto, tel or relative, else "#"),
// unquoted values holding data are quoted, and data inside a tag, an on… attribute or a <script> is refused.
import { describe, expect, it } from "vitest";
import { renderTemplateString, TemplateError } from "@/lib/graph/templates";
import { fakeRuntime } from "@/lib/nodes/__tests__/fake-runtime";
import type { NodeOf } from "@/lib/nodes/types";
import { renderEmail } from "@/lib/nodes/output/render-emails";

const ctx = (item: Record<string, unknown>) => ({ node: () => undefined, item, itemIndex: 0, field: "body", nodeId: "out" });
const html = (template: string, item: Record<string, unknown>) => renderTemplateString(template, ctx(item), { html: true });

const SCRIPT_URLS = [
  "javascript:alert(1)",
  "JavaScript:alert(1)",
  " javascript:alert(1)",
  "\tjava\nscript:alert(1)",
  "java\u0000script:alert(1)",
  "&#106;avascript:alert(1)",
  "&#x6A;avascript&colon;alert(1)",
  "javascript&#58;alert(1)",
  "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
  "vbscript:msgbox(1)",
  "\u2028javascript:alert(1)",
];

describe("values in attributes of an HTML body", () => {
  it.each(SCRIPT_URLS)("href from data %j is replaced by #", (url) => {
    expect(html('<a href="{{item.url}}">Open</a>', { url })).toBe('<a href="#">Open</a>');
    expect(html("<a href='{{item.url}}'>Open</a>", { url })).toBe("<a href='#'>Open</a>");
    expect(html("<a href={{item.url}}>Open</a>", { url })).toBe('<a href="#">Open</a>');
    expect(html('<img src="{{item.url}}">', { url })).toBe('<img src="#">');
  });

  it("a scheme built from the author's text and data is checked as a whole", () => {
    expect(html('<a href="java{{item.rest}}">x</a>', { rest: "script:alert(1)" })).toBe('<a href="#">x</a>');
    expect(html('<a href="{{item.scheme}}:{{item.rest}}">x</a>', { scheme: "javascript", rest: "alert(1)" })).toBe('<a href="#">x</a>');
    expect(html('<img srcset="{{item.a}} 1x, {{item.b}} 2x">', { a: "https://a.example/1.png", b: "javascript:alert(1)" })).toBe('<img srcset="#">');
  });

  it("keeps http(s), mailto, tel and relative addresses, escaped", () => {
    expect(html('<a href="{{item.url}}">x</a>', { url: "https://example.com/?a=1&b=<2>" })).toBe('<a href="https://example.com/?a=1&amp;b=&lt;2&gt;">x</a>');
    expect(html('<a href="https://example.com/u/{{item.id}}">x</a>', { id: "42" })).toBe('<a href="https://example.com/u/42">x</a>');
    expect(html('<a href="mailto:{{item.email}}">x</a>', { email: "ann@example.com" })).toBe('<a href="mailto:ann@example.com">x</a>');
    expect(html('<a href="tel:{{item.phone}}">x</a>', { phone: "+1 555" })).toBe('<a href="tel:+1 555">x</a>');
    expect(html('<a href="/p/{{item.id}}">x</a>', { id: "a:b" })).toBe('<a href="/p/a:b">x</a>');
    // The author's own text is not data: it is left as written.
    expect(html('<a href="javascript:void(0)">{{item.name}}</a>', { name: "Ann" })).toBe('<a href="javascript:void(0)">Ann</a>');
  });

  it("an unquoted attribute holding data is quoted, so spaces and > cannot add attributes", () => {
    const out = html("<a href={{item.url}} class=x>Open</a>", { url: "https://e.example/ onmouseover=alert(1) x=>" });
    expect(out).toBe('<a href="https://e.example/ onmouseover=alert(1) x=&gt;" class=x>Open</a>');
    expect(html("<td width={{item.w}}>1</td>", { w: '10 onclick="alert(1)"' })).toBe('<td width="10 onclick=&quot;alert(1)&quot;">1</td>');
    expect(html("<a title=Hi{{item.name}}>x</a>", { name: " Ann" })).toBe('<a title="Hi Ann">x</a>');
  });

  it("quotes and line breaks in a quoted value stay inside it", () => {
    expect(html('<a title="{{item.t}}" href="/">x</a>', { t: '" onclick="alert(1)' })).toBe('<a title="&quot; onclick=&quot;alert(1)" href="/">x</a>');
    expect(html("<a title='{{item.t}}'>x</a>", { t: "' onclick='alert(1)\n\n" })).toBe("<a title='&#39; onclick=&#39;alert(1)&#10;&#10;'>x</a>");
  });

  it("refuses data inside a tag, an event handler or a script", () => {
    for (const template of ["<a {{item.x}}>x</a>", '<a onclick="go({{item.x}})">x</a>', "<script>var a = {{item.x}};</script>", '<iframe srcdoc="{{item.x}}"></iframe>', "<img src=x {{item.x}}>"]) {
      expect(() => html(template, { x: "onerror=alert(1)" })).toThrow(TemplateError);
    }
    expect(() => html("<a {{item.x}}>", { x: "y" })).toThrow(/inside an HTML tag outside any attribute value/);
  });

  it("text between tags, after a script or a comment is escaped as before", () => {
    expect(html("<script>1</script><p>{{item.x}}</p><!-- c -->{{item.x}}", { x: "<b>" })).toBe("<script>1</script><p>&lt;b&gt;</p><!-- c -->&lt;b&gt;");
    expect(html("a > b {{item.x}} <br/> {{item.x}}", { x: "&" })).toBe("a > b &amp; <br/> &amp;");
  });
});

const markdownNode = (body: string) =>
  ({
    id: "out",
    type: "OUTPUT",
    data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hi", body, format: "markdown", unsubscribe: false },
  }) as NodeOf<"OUTPUT">;
const rt = fakeRuntime({ src: { rows: [] } });
const markdown = (body: string, item: Record<string, unknown>) => (renderEmail(markdownNode(body), rt, { email: "a@example.com", ...item }, 0) as { html: string }).html;

describe("values in a Markdown body", () => {
  it.each(SCRIPT_URLS.filter((url) => !/[\n\t\u0000\u2028 ]/.test(url)))("a link to %j points to #", (url) => {
    expect(markdown("[Open]({{item.url}})", { url })).toBe('<p><a href="#">Open</a></p>\n');
    expect(markdown("![pic]({{item.url}})", { url })).toContain('src="#"');
  });

  it("raw HTML in Markdown places values as an HTML body does", () => {
    expect(markdown('<a href="{{item.url}}">Open</a>', { url: "javascript:alert(1)" })).toContain('<a href="#">Open</a>');
    expect(markdown('Hi <a title="{{item.t}}">x</a>', { t: '" onclick="alert(1)' })).toContain('<a title="&quot; onclick=&quot;alert(1)">x</a>');
    expect(markdown("<a href={{item.url}}>x</a>", { url: "https://e.example/ onclick=alert(1)" })).toContain('<a href="https://e.example/ onclick=alert(1)">x</a>');
    expect(markdown("[Docs]({{item.url}})", { url: "https://example.com/docs" })).toBe('<p><a href="https://example.com/docs">Docs</a></p>\n');
  });
});
