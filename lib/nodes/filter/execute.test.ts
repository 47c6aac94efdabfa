import { describe, expect, it } from "vitest";
import { fakeRuntime } from "../__tests__/fake-runtime";
import { NodeError, type NodeOf } from "../types";
import { filterExecutor } from "./execute";

const node = (expr: string, source = "{{src.rows}}") => ({ id: "f", type: "FILTER", data: { source, expr } }) as NodeOf<"FILTER">;
const rows = [
  { name: "Ann", rating: "5" },
  { name: "Bob", rating: "2" },
  { name: "Cy", rating: "10" },
];

describe("FILTER", () => {
  it("keeps the items the expression accepts, comparing numeric strings as numbers", async () => {
    const result = await filterExecutor.execute(node("rating >= 4"), fakeRuntime({ src: { rows } }));
    expect(result).toEqual({
      kind: "done",
      output: { items: [rows[0], rows[2]], count: 2, filteredOut: 1 },
      itemsIn: 3,
      itemsOut: 2,
    });
  });

  it("sees upstream outputs by node id", async () => {
    const result = await filterExecutor.execute(node("rating >= cfg.min"), fakeRuntime({ src: { rows }, cfg: { min: 6 } }));
    expect(result.kind === "done" && result.output.items).toEqual([rows[2]]);
  });

  it("fails on an unknown name, naming the expression and the item index", async () => {
    const error = await filterExecutor.execute(node("ratng >= 4"), fakeRuntime({ src: { rows } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeError);
    expect((error as Error).message).toMatch(/"ratng >= 4" failed on item 0/);
  });

  it("fails when the source is not a list, or names a skipped node", async () => {
    const notList = await filterExecutor.execute(node("true", "{{src.rowCount}}"), fakeRuntime({ src: { rowCount: 3 } })).catch((e: Error) => e);
    expect((notList as Error).message).toMatch(/is not a list \(it is a number\)/);
    const skipped = await filterExecutor.execute(node("true"), fakeRuntime({}, ["src"])).catch((e: Error) => e);
    expect((skipped as Error).message).toMatch(/SKIPPED/);
  });
});
