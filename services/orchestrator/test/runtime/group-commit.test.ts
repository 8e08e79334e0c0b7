import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/runtime/group-commit.ts";

// The batching rule of claims and checkpoints, without a database: what arrives in one tick or
// during a flight goes out together; a failed batch is retried item by item.

describe("GroupCommit", () => {
  it("sends the first item at once, then everything that arrived during the flight in one batch", async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const group = new GroupCommit<number, number>({
      flush: async (items) => {
        batches.push(items);
        if (batches.length === 1) await gate;
        return items.map((i) => i * 10);
      },
    });
    const first = group.submit(1);
    await new Promise((r) => setTimeout(r, 5));
    const rest = [2, 3, 4].map((i) => group.submit(i));
    release();
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it("items of the same tick share a statement, and a batch is cut at maxBatch", async () => {
    const batches: number[][] = [];
    const group = new GroupCommit<number, number>({
      maxBatch: 2,
      flush: async (items) => (batches.push(items), items),
    });
    expect(await Promise.all([1, 2, 3].map((i) => group.submit(i)))).toEqual([1, 2, 3]);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it("a failed batch is retried item by item: only the bad item fails", async () => {
    const group = new GroupCommit<number, number>({
      flush: async (items) => {
        if (items.includes(13)) throw new Error("bad row");
        return items;
      },
    });
    const results = await Promise.allSettled([1, 13, 3].map((i) => group.submit(i)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error("bad row"));
    // Still usable afterwards.
    expect(await group.submit(7)).toBe(7);
  });
});
