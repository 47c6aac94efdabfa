import { describe, expect, it, vi } from "vitest";
import { Parser, type ExpressionNode } from "./expression-parser";
import { ExpressionBudget, ExpressionError, ExpressionSyntaxError, compileExpression, isTruthy, type ExpressionScope } from "./expressions";

const row = (fields: Record<string, unknown>) => Object.assign(Object.create(null), fields) as Record<string, unknown>;

function run(source: string, item?: unknown, nodes: ExpressionScope["nodes"] = {}): unknown {
  return compileExpression(source).evaluate(item === undefined ? { nodes } : { item, nodes });
}

function syntaxError(source: string): ExpressionSyntaxError {
  try {
    compileExpression(source);
  } catch (error) {
    expect(error).toBeInstanceOf(ExpressionSyntaxError);
    return error as ExpressionSyntaxError;
  }
  throw new Error(`expected a syntax error for ${source}`);
}

function runtimeError(source: string, item?: unknown, nodes: ExpressionScope["nodes"] = {}): ExpressionError {
  try {
    run(source, item, nodes);
  } catch (error) {
    expect(error).toBeInstanceOf(ExpressionError);
    return error as ExpressionError;
  }
  throw new Error(`expected a run-time error for ${source}`);
}

describe("literals and operators", () => {
  it.each([
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["10 - 4 - 3", 3],
    ["20 / 4 / 5", 1],
    ["7 % 4", 3],
    ["-2 * -3", 6],
    ["+'5' + 1", 6],
    ["1.5e2", 150],
    [".5 + .25", 0.75],
    ["'a' + \"b\"", "ab"],
    ["'it\\'s' + \"\\u00e9\\n\"", "it's\u00e9\n"],
    ["'n=' + 4", "n=4"],
    ["[1, 2] + [3]", [1, 2, 3]],
    ["[]", []],
    ["[1, 'a', [true, null]]", [1, "a", [true, null]]],
    ["true", true],
    ["null", null],
    ["(1 < 2) == true", true],
    ["!true == false", true],
    ["not 1 == 2", true],
    ["true || false && false", true],
    ["(true || false) && false", false],
    ["true or false and false", true],
    ["not false and not false", true],
    ["!0", true],
    ["1 === 1 && 1 !== 2", true],
  ])("%s → %j", (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it("returns booleans from && and || and short-circuits", () => {
    expect(run("1 && 'x'")).toBe(true);
    expect(run("0 || ''")).toBe(false);
    expect(run("false && missing_field", row({}))).toBe(false);
    expect(run("true || missing_field", row({}))).toBe(true);
  });
});

describe("comparisons across types: numeric strings, booleans, null and lists", () => {
  it.each([
    ['"4" >= 4', true],
    ['"10" > 9', true],
    ['4 == "4"', true],
    ['"4" == 4', true],
    ['"4.0" == 4', true],
    ['" 4 " == 4', true],
    ['"abc" > 1', false],
    ['"abc" < 1', false],
    ['"abc" == 1', false],
    ['"abc" != 1', true],
    ['"" == 0', false],
    ['"" < 1', false],
    ['"10" > "9"', true],
    ['"b" > "a"', true],
    ['"apple" < "banana"', true],
    ['"4" == "4.0"', false],
    ["null == null", true],
    ["null == 0", false],
    ["null < 1", false],
    ['"true" == true', true],
    ['"FALSE" == false', true],
    ['"yes" == true', false],
    ["1 == true", false],
    ["[1, 2] == [1, 2]", true],
    ['[1, "2"] == [1, 2]', true],
    ["[1] == [1, 2]", false],
    ["true > false", false],
  ])("%s → %s", (source, expected) => {
    expect(run(source)).toBe(expected);
  });

  it("compares CSV string fields numerically against numbers", () => {
    const compiled = compileExpression("rating >= 4");
    expect(["3", "4", "10", "4.5", "", "n/a"].map((rating) => compiled.evaluate({ item: row({ rating }), nodes: {} }))).toEqual([
      false, true, true, true, false, false,
    ]);
  });

  it("gives the same answers on the constant fast path as on the general path", () => {
    const values: unknown[] = ["4", "4.0", " 4 ", "abc", "", "true", "FALSE", 4, 0, -1.5, null, true, false, [4], { a: 1 }];
    const constants: (number | string)[] = [4, 0, -1.5, "4", "abc", "", "true"];
    for (const op of ["==", "!=", "<", "<=", ">", ">="]) {
      for (const constant of constants) {
        const fast = compileExpression(`x ${op} ${JSON.stringify(constant)}`);
        const general = compileExpression(`x ${op} [${JSON.stringify(constant)}][0]`);
        for (const x of values) {
          const scope = { item: { x }, nodes: {} };
          expect([op, constant, x, fast.evaluate(scope)]).toEqual([op, constant, x, general.evaluate(scope)]);
        }
      }
    }
  });

  it("refuses chained comparisons", () => {
    expect(syntaxError("1 < x < 3").message).toBe('Unexpected "<" at position 6: comparisons cannot be chained, join them with &&');
  });
});

describe("in, helpers and methods", () => {
  it.each([
    ['"fr" in ["de", "fr"]', true],
    ['4 in ["3", "4"]', true],
    ['"x" not in ["a"]', true],
    ['"ell" in "hello"', true],
    ['"z" in "hello"', false],
    ['"a" in null', false],
    ['contains("hello", "ell")', true],
    ['contains(["a", "b"], "b")', true],
    ['startsWith("hello", "he")', true],
    ['endsWith("hello", "lo")', true],
    ['lower("ÉCOLE")', "école"],
    ['upper("abc")', "ABC"],
    ['len("abc")', 3],
    ["len([1, 2])", 2],
    ["len(null)", 0],
    ['"Hello".contains("ell")', true],
    ['"Hello".lower() == "hello"', true],
    ['"a@example.com".endsWith("@example.com")', true],
    ['lower(null) == ""', true],
    ["upper(12)", "12"],
  ])("%s → %j", (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it("checks an object's own keys with in", () => {
    expect(run('"email" in item', { email: "" })).toBe(true);
    expect(run('"toString" in item', { email: "" })).toBe(false);
    expect(run('"constructor" in item', {})).toBe(false);
  });

  it("checks helper arity at compile time", () => {
    expect(syntaxError("len(1, 2)").message).toBe("len() takes 1 argument, got 2 (at position 0)");
    expect(syntaxError('contains("a")').message).toBe("contains() takes 2 arguments, got 1 (at position 0)");
  });

  it("reports in on a number as an error", () => {
    expect(runtimeError("1 in 5").message).toBe('"in" cannot search number 5');
  });
});

describe("names and scope", () => {
  const nodes = { ai: { urgent: true, summary: "ok" }, src: { rowCount: 3, rows: [{ a: 1 }] } };

  it("reads item fields as bare names and through item.", () => {
    const item = row({ rating: "5", country: "FR", note: "" });
    expect(run('rating >= 4 && lower(country) == "fr"', item, nodes)).toBe(true);
    expect(run("item.rating == 5 and item.note == ''", item, nodes)).toBe(true);
    expect(run('item["country"]', item, nodes)).toBe("FR");
  });

  it("reads upstream node outputs as <nodeId>.<field>", () => {
    expect(run("ai.urgent && src.rowCount > 2", undefined, nodes)).toBe(true);
    expect(run("src.rows[0].a", undefined, nodes)).toBe(1);
    expect(run("src.rows[5]", undefined, nodes)).toBeNull();
    expect(run("len(src.rows)", undefined, nodes)).toBe(1);
  });

  it("prefers a node id before a dot, and an item field for a bare name", () => {
    const item = row({ ai: "field value" });
    expect(run("ai.summary", item, nodes)).toBe("ok");
    expect(run("ai", item, nodes)).toBe("field value");
    expect(run("item.ai", item, nodes)).toBe("field value");
    expect(run("src", row({}), nodes)).toEqual(nodes.src);
    expect(run("meta.k", row({ meta: { k: 2 } }), nodes)).toBe(2);
  });

  it("fails on an unknown name instead of filtering everything out", () => {
    expect(runtimeError("ratng >= 4", row({ rating: "4", country: "FR" }), nodes).message).toBe(
      'Unknown name "ratng": the item has no such field (fields: rating, country) and no upstream node that succeeded has that id (upstream nodes: ai, src)',
    );
    expect(runtimeError("ai.urgent", undefined, {}).message).toBe('Unknown name "ai": no upstream node that succeeded has that id');
    expect(runtimeError("ai.urgnt", undefined, nodes).message).toBe('There is no field "urgnt" (fields: urgent, summary)');
    expect(runtimeError("ai.summary.text", undefined, nodes).message).toBe('Field "text" cannot be read from the text "ok"');
    expect(runtimeError("item.x", undefined, nodes).message).toBe('"item" only exists in a FILTER expression');
  });

  it("lets JavaScript keywords that are plausible column names be field names", () => {
    expect(run('class == "5B" && return == "no" && module != ""', row({ class: "5B", return: "no", module: "m1" }))).toBe(true);
  });

  it("accepts a field that is present with an empty value", () => {
    expect(run('note == ""', row({ note: "" }))).toBe(true);
    expect(run("note", row({ note: null }))).toBeNull();
  });

  it("never reaches prototypes through field names", () => {
    const plain = { rating: "4" };
    expect(runtimeError("toString", plain).message).toContain('Unknown name "toString"');
    expect(runtimeError("hasOwnProperty", plain).message).toContain('Unknown name "hasOwnProperty"');
    expect(runtimeError('item["toString"]', plain).message).toBe('There is no field "toString" (fields: rating)');
    expect(runtimeError('item["__proto__"]', plain).message).toBe('There is no field "__proto__" (fields: rating)');
    expect(runtimeError('src["constructor"]', undefined, { src: {} }).message).toBe('There is no field "constructor" (fields: none)');
    expect(runtimeError("valueOf", undefined, {}).message).toContain('Unknown name "valueOf"');
  });

  it("lists its free root names and references", () => {
    const compiled = compileExpression('rating >= 4 && ai.urgent && lower(country) == "fr" || item.x || rating > 1');
    expect(compiled.names()).toEqual(["rating", "ai", "country", "item"]);
    expect(compiled.references()).toEqual([
      { name: "rating", member: false, position: 0 },
      { name: "ai", member: true, position: 15, field: "urgent" },
      { name: "country", member: false, position: 34 },
      { name: "item", member: true, position: 54, field: "x" },
      { name: "rating", member: false, position: 64 },
    ]);
    expect(compiled.source).toBe('rating >= 4 && ai.urgent && lower(country) == "fr" || item.x || rating > 1');
  });
});

describe("arithmetic errors", () => {
  it("needs numbers for - * / % and refuses division by zero", () => {
    expect(run('"6" / 2')).toBe(3);
    expect(runtimeError('"abc" * 2').message).toBe('"*" needs numbers, got the text "abc"');
    expect(runtimeError("1 / 0").message).toBe("Division by zero");
    expect(runtimeError("5 % 0").message).toBe("Division by zero");
    expect(runtimeError("true + 1").message).toBe('"+" cannot add boolean true and number 1');
  });
});

describe("syntax errors carry a 0-based position", () => {
  it.each([
    ["rating >= )", 'Unexpected ")" at position 10', 10],
    ["(a + 1", "Unexpected end of expression at position 6", 6],
    ["a +", "Unexpected end of expression at position 3", 3],
    ["a = 1", 'Unexpected "=" at position 2 (use "==" to compare)', 2],
    ["a == 1 b", 'Unexpected "b" at position 7', 7],
    ["'unterminated", "Unterminated string starting at position 0", 0],
    ["'bad \\q escape'", 'Unknown escape "\\q" at position 5', 5],
    ["a & b", 'Unexpected "&" at position 2', 2],
    ["12abc", 'Unexpected "a" at position 2', 2],
    ["[1, 2", "Unexpected end of expression at position 5", 5],
    ["a.", "Unexpected end of expression at position 2", 2],
    ["a.1", 'Unexpected "." at position 1', 1],
    ["x in", "Unexpected end of expression at position 4", 4],
    ["and", 'Unexpected "a" at position 0', 0],
    ["", "Expression is empty", 0],
    ["   ", "Expression is empty", 0],
    ["a ? b : c", 'Unexpected "?" at position 2', 2],
    ["`x`", 'Unexpected "`" at position 0', 0],
    ["a; b", 'Unexpected ";" at position 1', 1],
    ["x => 1", 'Unexpected "=" at position 2 (use "==" to compare)', 2],
  ])("%j", (source, message, position) => {
    const error = syntaxError(source);
    expect(error.message).toBe(message);
    expect(error.position).toBe(position);
  });

  it("limits nesting and length", () => {
    expect(syntaxError("(".repeat(200) + "1" + ")".repeat(200)).message).toMatch(/^Expression is nested too deeply at position \d+$/);
    expect(syntaxError("!".repeat(500) + "true").message).toMatch(/nested too deeply/);
    expect(syntaxError("1 + ".repeat(3000) + "1").message).toBe("Expression is longer than 10000 characters");
    expect(run("(".repeat(30) + "1" + ")".repeat(30))).toBe(1);
  });

  it("compiles long flat expressions in linear time", () => {
    // Counted, not timed. Compiling reads the `type` of each node of the syntax tree a few times at most (compiling a
    // binary operator's left operand twice made a chain of n operators cost 2^n reads); past 4 reads a term the count
    // fails the compile at once. Evaluating costs the expression budget one unit an operator or field read.
    let visits = 0;
    let visitLimit = 0;
    const counted = (value: unknown): unknown =>
      value === null || typeof value !== "object"
        ? value
        : new Proxy(value, {
            get(target, key, receiver) {
              if (key === "type" && ++visits > visitLimit) throw new Error(`compiling read the syntax tree more than ${visitLimit} times`);
              return counted(Reflect.get(target, key, receiver));
            },
          });
    const parse = Parser.prototype.parse;
    const spy = vi.spyOn(Parser.prototype, "parse").mockImplementation(function (this: Parser) {
      return counted(parse.call(this)) as ExpressionNode;
    });
    const work = (source: string, terms: number, item?: unknown) => {
      visits = 0;
      visitLimit = 4 * terms;
      const compiled = compileExpression(source);
      const budget = new ExpressionBudget();
      budget.startItem();
      const value = compiled.evaluate({ item, nodes: {} }, budget);
      return { value, visits, steps: budget.work };
    };
    try {
      const sum = work("1+".repeat(4999) + "1", 5000);
      expect(sum.value).toBe(5000);
      expect(sum.steps).toBeLessThanOrEqual(5000);
      const or = work("x" + " || x".repeat(1999), 2000, { x: 0 });
      expect(or.value).toBe(false);
      expect(or.steps).toBeLessThanOrEqual(2 * 2000);
      let nested: unknown = "end";
      for (let i = 0; i < 3000; i++) nested = { b: nested };
      const path = work("a" + ".b".repeat(3000), 3001, { a: nested });
      expect(path.value).toBe("end");
      expect(path.steps).toBeLessThanOrEqual(2 * 3001);
      // Each compiled within its limit; a tree was read at all (the count counts).
      expect(Math.min(sum.visits, or.visits, path.visits)).toBeGreaterThan(0);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("hostile input cannot reach anything", () => {
  it.each([
    ["with (item) { rating }", '"with" is not allowed (at position 0)'],
    ["Function('return process')()", '"Function" is not allowed (at position 0)'],
    ["this.rating", '"this" is not allowed (at position 0)'],
    ["this", '"this" is not allowed (at position 0)'],
    ["import('fs')", '"import" is not allowed (at position 0)'],
    ["constructor.constructor('return process')()", '"constructor" is not allowed (at position 0)'],
    ["name.constructor.constructor('return process')()", '"constructor" is not allowed (at position 5)'],
    ["__proto__.polluted", '"__proto__" is not allowed (at position 0)'],
    ["item.__proto__", '"__proto__" is not allowed (at position 5)'],
    ["rating.prototype", '"prototype" is not allowed (at position 7)'],
    ["globalThis.process", '"globalThis" is not allowed (at position 0)'],
    ["require('child_process')", '"require" is not allowed (at position 0)'],
    ["eval('1')", '"eval" is not allowed (at position 0)'],
    ["new Date()", '"new" is not allowed (at position 0)'],
    ["toString()", 'Unknown function "toString" at position 0: only contains, startsWith, endsWith, lower, upper, len can be called'],
    ["name.toString()", 'Unknown function "toString" at position 5: only contains, startsWith, endsWith, lower, upper, len can be called'],
    ["name['toString']()", 'Unexpected "(" at position 16: only contains, startsWith, endsWith, lower, upper, len can be called'],
    ["(lower)('A')", 'Unexpected "(" at position 7: only contains, startsWith, endsWith, lower, upper, len can be called'],
    ["a.b = 1", 'Unexpected "=" at position 4 (use "==" to compare)'],
  ])("%s", (source, message) => {
    expect(syntaxError(source).message).toBe(message);
  });

  it("treats other global names as unknown names at run time", () => {
    for (const source of ["process.env", "window.location", "global", "module.exports", "arguments[0]"]) {
      expect(runtimeError(source, row({ rating: "4" })).message).toMatch(/^Unknown name "\w+": the item has no such field/);
    }
  });

  it("does not pollute prototypes through data keys", () => {
    const item = JSON.parse('{"__proto__": {"polluted": true}, "rating": "5"}');
    expect(run("rating == 5", item)).toBe(true);
    expect(runtimeError("polluted", item).message).toContain('Unknown name "polluted"');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("isTruthy", () => {
  it.each([
    [true, true], [false, false], [null, false], [undefined, false], [0, false], [Number.NaN, false], [1, true], [-1, true],
    ["", false], ["0", false], ["false", false], [" FALSE ", false], ["no", true], ["x", true], ["0.0", true],
    [[], false], [[0], true], [{}, true],
  ])("%j → %s", (value, expected) => {
    expect(isTruthy(value)).toBe(expected);
  });
});
