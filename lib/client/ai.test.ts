import { describe, expect, it } from "vitest";
import type { NodeResult } from "./types";
import { answerFields, describeElement, formatUsd, isAiForEach, loneRef, usageOf } from "./ai";

const node = (over: Partial<NodeResult>): NodeResult =>
  ({ type: "AI", status: "SUCCESS", output: null, outputTruncated: false, error: null, startedAt: null, completedAt: null, ...over }) as NodeResult;

describe("the run view's reading of AI outputs", () => {
  it("writes costs as dollars, small ones with four decimals, and says unknown rather than guessing", () => {
    expect(formatUsd(null)).toBe("unknown");
    expect(formatUsd(undefined)).toBe("unknown");
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(0.00004)).toBe("under $0.0001");
    expect(formatUsd(0.00022)).toBe("$0.0002");
    expect(formatUsd(0.5)).toBe("$0.5000");
    expect(formatUsd(1234.5)).toBe("$1,234.50");
  });

  it("reads usage only when it is well formed, a missing price as null", () => {
    expect(usageOf({ usage: { calls: 3, inputTokens: 30, outputTokens: 12, costUsd: null } })).toEqual({ calls: 3, inputTokens: 30, outputTokens: 12, costUsd: null });
    expect(usageOf({ usage: { calls: 1, inputTokens: 5, outputTokens: 2, costUsd: 0.001 } })?.costUsd).toBe(0.001);
    expect(usageOf({ usage: "lots" })).toBeNull();
    expect(usageOf({ summary: "no usage" })).toBeNull();
    expect(usageOf(null)).toBeNull();
  });

  it("takes a lone {{node.field}} apart and nothing else", () => {
    expect(loneRef("{{src.rows}}")).toEqual({ nodeId: "src", field: "rows" });
    expect(loneRef(" {{ keep.items }} ")).toEqual({ nodeId: "keep", field: "items" });
    expect(loneRef("{{src.rows}} and {{x.y}}")).toBeNull();
    expect(loneRef("{{src.rows.0}}")).toBeNull();
    expect(loneRef("{{src}}")).toBeNull();
    expect(loneRef(undefined)).toBeNull();
  });

  it("knows an AI node with forEach by its running progress or its output's counts", () => {
    expect(isAiForEach(node({ status: "RUNNING", progress: { done: 2, total: 9 } }))).toBe(true);
    expect(isAiForEach(node({ output: { items: [], count: 0, failed: 0, usage: {} } }))).toBe(true);
    expect(isAiForEach(node({ output: { summary: "x", usage: {} } }))).toBe(false);
    expect(isAiForEach(node({ type: "OUTPUT", status: "RUNNING", progress: { sent: 1, total: 2 } }))).toBe(false);
    expect(isAiForEach(undefined)).toBe(false);
  });

  it("names the answer fields of a page in first-seen order, and an element by its first values", () => {
    expect(answerFields([{ output: { greeting: "a" } }, { output: null }, { output: { greeting: "b", tone: "warm" } }])).toEqual(["greeting", "tone"]);
    expect(describeElement({ name: "Ada", email: "ada@example.com", rating: 5 })).toEqual({ text: "Ada · ada@example.com", title: '{"name":"Ada","email":"ada@example.com","rating":5}' });
    expect(describeElement({ blank: " ", n: 3, nested: { a: 1 } }).text).toBe("3");
    expect(describeElement("plain")).toEqual({ text: "plain", title: "plain" });
  });
});
