import { describe, expect, it } from "vitest";
import {
  TemplateError,
  TemplateSyntaxError,
  isLoneTemplate,
  renderTemplate,
  renderTemplateString,
  templateRefs,
  type TemplateContext,
} from "./templates";

const outputs: Record<string, { status: string; output: Record<string, unknown> | null }> = {
  src: {
    status: "SUCCESS",
    output: { rows: [{ email: "ann@example.com", name: "Ann" }], rowCount: 1, columns: ["email", "name"] },
  },
  ai: { status: "SUCCESS", output: { summary: "Sales <up> & \"away\"", score: 4.5, ok: true, tags: ["a", "b"], meta: { k: 1 }, none: null } },
  branch: { status: "SKIPPED", output: null },
  broken: { status: "FAILED", output: null },
};

function ctx(extra: Partial<TemplateContext> = {}): TemplateContext {
  return { node: (id) => outputs[id], ...extra };
}

function errorOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("templateRefs", () => {
  it("parses node and item references with optional spaces and array indexes", () => {
    expect(templateRefs("Hi {{ item.name }}, see {{src.rows.0.email}} and {{ai}}")).toEqual([
      { root: "item", path: ["name"], raw: "{{ item.name }}" },
      { root: "src", path: ["rows", 0, "email"], raw: "{{src.rows.0.email}}" },
      { root: "ai", path: [], raw: "{{ai}}" },
    ]);
  });

  it("allows CSV header names with spaces and dashes", () => {
    expect(templateRefs("{{ item.First Name }} {{item.e-mail}}")).toEqual([
      { root: "item", path: ["First Name"], raw: "{{ item.First Name }}" },
      { root: "item", path: ["e-mail"], raw: "{{item.e-mail}}" },
    ]);
  });

  it("treats \\{{ as a literal and ignores a lone }}", () => {
    expect(templateRefs("\\{{ not.a.template }} and }} {{a.b}}")).toEqual([{ root: "a", path: ["b"], raw: "{{a.b}}" }]);
  });

  it.each([
    ["Hello {{src.rows", 'Unclosed "{{" at position 6', 6],
    ["x {{}}", "Invalid template {{}} at position 2: it names nothing; write {{nodeId.field}} or {{item.field}}", 2],
    ["{{ src..rows }}", "Invalid template {{ src..rows }} at position 0: a path has an empty part", 0],
    ["{{9src.rows}}", 'Invalid template {{9src.rows}} at position 0: "9src" is not a node id', 0],
    ["ab{{constructor.constructor('return process')()}}", expect.stringContaining("at position 2: a reference is a node id or item"), 2],
    ["{{__proto__}}", expect.stringContaining('"__proto__", "constructor", "prototype" name nothing'), 0],
    ["{{constructor.name}}", expect.stringContaining("name nothing"), 0],
    ["{{item.__proto__.x}}", expect.stringContaining("name nothing"), 0],
    ["{{ src.rows[0] }}", expect.stringContaining("nothing else"), 0],
    ["{{a.b}} {{ {{a.b}} }}", expect.stringContaining("nothing else"), 8],
  ])("rejects %j", (text, message, position) => {
    const error = errorOf(() => templateRefs(text));
    expect(error).toBeInstanceOf(TemplateSyntaxError);
    expect(error.message).toEqual(message);
    expect((error as TemplateSyntaxError).position).toBe(position);
  });
});

describe("renderTemplate", () => {
  it("yields the raw value for a lone template, even with surrounding whitespace", () => {
    expect(renderTemplate("{{src.rows}}", ctx())).toEqual(outputs.src.output!.rows);
    expect(renderTemplate("  {{ ai.score }}\n", ctx())).toBe(4.5);
    expect(renderTemplate("{{ai.ok}}", ctx())).toBe(true);
    expect(renderTemplate("{{ai.none}}", ctx())).toBeNull();
    expect(renderTemplate("{{ item }}", ctx({ item: { a: 1 }, itemIndex: 0 }))).toEqual({ a: 1 });
    expect(isLoneTemplate(" {{a.b}} ")).toBe(true);
    expect(isLoneTemplate("{{a.b}}{{a.c}}")).toBe(false);
    expect(isLoneTemplate("rows: {{a.b}}")).toBe(false);
  });

  it("interpolates strings as they are, numbers and booleans with String(), arrays and objects as JSON, null as empty", () => {
    expect(renderTemplate("{{ai.summary}}|{{ai.score}}|{{ai.ok}}|{{ai.tags}}|{{ai.meta}}|{{ai.none}}|{{src.rowCount}}", ctx())).toBe(
      'Sales <up> & "away"|4.5|true|["a","b"]|{"k":1}||1',
    );
  });

  it("renders literal {{ from \\{{ and keeps other backslashes", () => {
    expect(renderTemplate("\\{{ai.score}} is {{ai.score}} \\n", ctx())).toBe("{{ai.score}} is 4.5 \\n");
    expect(renderTemplate("plain text", ctx())).toBe("plain text");
  });

  it("reads item fields and array indexes", () => {
    const item = { email: "bob@example.com", "First Name": "Bob", tags: ["x", "y"] };
    expect(renderTemplate("{{item.First Name}} <{{item.email}}> {{item.tags.1}}", ctx({ item, itemIndex: 3 }))).toBe("Bob <bob@example.com> y");
    expect(renderTemplate("{{src.rows.0.name}}", ctx())).toBe("Ann");
  });

  it("reads only own properties: constructor, toString and prototype keys are not there", () => {
    const item = { name: "Ann" };
    for (const field of ["toString", "hasOwnProperty", "valueOf", "prototype"]) {
      expect(errorOf(() => renderTemplate(`{{item.${field}}}`, ctx({ item, itemIndex: 0 })))).toBeInstanceOf(TemplateError);
    }
    expect(errorOf(() => renderTemplate("{{ai.tags.length}}", ctx())).message).toContain('"length" is not an index of a list');
    const row = Object.assign(Object.create(null), { constructor: "a real CSV column" });
    expect(renderTemplate("{{item.constructor}}", ctx({ item: row, itemIndex: 0 }))).toBe("a real CSV column");
  });

  it("names the template, the node, the field and the item index when a field is missing", () => {
    const error = errorOf(() =>
      renderTemplate("Hi {{item.emial}}", ctx({ item: { email: "a@b.c", name: "A" }, itemIndex: 7, nodeId: "out", field: "to" })),
    );
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toBe('Template {{item.emial}} in to of node "out" (item 7): there is no field "emial" (fields: email, name) in the item');
    expect(errorOf(() => renderTemplate("{{src.rows.3.email}}", ctx({ nodeId: "ai", field: "prompt" }))).message).toBe(
      'Template {{src.rows.3.email}} in prompt of node "ai": index 3 is past the end of a list of 1 in node "src"\'s output at src.rows',
    );
    expect(errorOf(() => renderTemplate("{{ai.summary.text}}", ctx())).message).toBe(
      'Template {{ai.summary.text}}: "text" cannot be read from a string in node "ai"\'s output at ai.summary',
    );
  });

  it("fails on a node that did not succeed in this run, naming it and its status", () => {
    expect(errorOf(() => renderTemplate("{{branch.summary}}", ctx({ nodeId: "join", field: "body", itemIndex: 2 }))).message).toBe(
      'Template {{branch.summary}} in body of node "join" (item 2) needs node "branch", which was SKIPPED (its branch was not taken or an upstream node failed) in this run',
    );
    expect(errorOf(() => renderTemplate("x {{broken.a}}", ctx())).message).toContain('needs node "broken", which FAILED in this run');
    expect(errorOf(() => renderTemplate("{{ghost.a}}", ctx())).message).toBe(
      'Template {{ghost.a}} names node "ghost", which is not in this workflow',
    );
    const pending: TemplateContext = { node: () => ({ status: "PENDING", output: null }) };
    expect(errorOf(() => renderTemplate("{{a.b}}", pending)).message).toContain("has not finished");
  });

  it("fails on item outside a per-item render", () => {
    expect(errorOf(() => renderTemplate("{{item.email}}", ctx({ nodeId: "ai", field: "prompt" }))).message).toBe(
      'Template {{item.email}} in prompt of node "ai" uses item, which only exists per item in an OUTPUT node\'s to, subject and body',
    );
  });

  it("is lazy: only the references in the text are resolved", () => {
    const asked: string[] = [];
    const lazy: TemplateContext = { node: (id) => (asked.push(id), outputs[id]) };
    expect(renderTemplate("{{ai.score}} only", lazy)).toBe("4.5 only");
    expect(asked).toEqual(["ai"]);
  });

  it("throws the syntax error for a malformed template at render time too", () => {
    expect(errorOf(() => renderTemplate("{{ai.score", ctx()))).toBeInstanceOf(TemplateSyntaxError);
  });
});

describe("renderTemplateString", () => {
  it("always returns a string, a lone template included", () => {
    expect(renderTemplateString("{{ai.score}}", ctx())).toBe("4.5");
    expect(renderTemplateString("{{ai.tags}}", ctx())).toBe('["a","b"]');
    expect(renderTemplateString("{{ai.none}}", ctx())).toBe("");
  });

  it("escapes interpolated values but not the literal text when html is set", () => {
    expect(renderTemplateString("<p>{{ai.summary}}</p>", ctx(), { html: true })).toBe("<p>Sales &lt;up&gt; &amp; &quot;away&quot;</p>");
    expect(renderTemplateString("<b>{{item.name}}</b>", ctx({ item: { name: "<script>alert('x')</script>" }, itemIndex: 0 }), { html: true })).toBe(
      "<b>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</b>",
    );
    expect(renderTemplateString("<p>{{ai.summary}}</p>", ctx())).toBe('<p>Sales <up> & "away"</p>');
  });
});
