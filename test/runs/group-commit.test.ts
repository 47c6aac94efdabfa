import { describe, expect, it } from "vitest";
import { groupCommit } from "@/lib/group-commit";

/** A flush that records its batches and answers when released. */
function recorder() {
  const batches: number[][] = [];
  const releases: (() => void)[] = [];
  const flush = (items: number[]) => {
    batches.push(items);
    return new Promise<number[]>((resolve) => releases.push(() => resolve(items.map((n) => n * 10))));
  };
  return { batches, releases, flush };
}

describe("groupCommit", () => {
  it("sends the first item at once and the items that arrive meanwhile together, in arrival order", async () => {
    const r = recorder();
    const insert = groupCommit(r.flush);
    const first = insert(1);
    expect(r.batches).toEqual([[1]]);
    const rest = [2, 3, 4, 5].map((n) => insert(n));
    expect(r.batches).toHaveLength(1); // waiting for the batch in flight
    r.releases[0]();
    expect(await first).toBe(10);
    await Promise.resolve();
    expect(r.batches).toEqual([[1], [2, 3, 4, 5]]);
    r.releases[1]();
    expect(await Promise.all(rest)).toEqual([20, 30, 40, 50]);
  });

  it("caps a batch at maxBatch items", async () => {
    const r = recorder();
    const insert = groupCommit(r.flush, 2);
    const all = [1, 2, 3, 4, 5].map((n) => insert(n));
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      r.releases[i]();
    }
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
    expect(r.batches).toEqual([[1], [2, 3], [4, 5]]);
  });

  it("rejects every item of a failed batch, and the next batch still goes out", async () => {
    let calls = 0;
    const insert = groupCommit(async (items: number[]) => {
      calls++;
      if (calls === 2) throw new Error("connection lost");
      return items;
    });
    const first = insert(1);
    const failed = [insert(2), insert(3)];
    expect(await first).toBe(1);
    for (const p of failed) await expect(p).rejects.toThrow("connection lost");
    expect(await insert(4)).toBe(4);
  });

  it("refuses a flush that answers the wrong number of results", async () => {
    const insert = groupCommit(async () => [] as number[]);
    await expect(insert(1)).rejects.toThrow("0 results for 1 items");
  });

  it("gatherTurn: every call of the current turn goes in the first batch, built at setImmediate", async () => {
    const r = recorder();
    const insert = groupCommit(r.flush, 500, { gatherTurn: true });
    const first = [1, 2, 3].map((n) => insert(n));
    expect(r.batches).toEqual([]); // nothing built yet: the turn is not over
    await Promise.resolve();
    const fourth = insert(4); // still this turn (a microtask later)
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.batches).toEqual([[1, 2, 3, 4]]);
    const later = insert(5); // while the batch is in flight: the next batch
    r.releases[0]();
    expect(await Promise.all([...first, fourth])).toEqual([10, 20, 30, 40]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.batches).toEqual([[1, 2, 3, 4], [5]]);
    r.releases[1]();
    expect(await later).toBe(50);
    // Idle again: the next call waits for the end of its own turn.
    const again = insert(6);
    expect(r.batches).toHaveLength(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.batches).toEqual([[1, 2, 3, 4], [5], [6]]);
    r.releases[2]();
    expect(await again).toBe(60);
  });
});
