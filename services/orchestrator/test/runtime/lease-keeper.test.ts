import { describe, expect, it } from "vitest";
import { LeaseKeeper, type LeaseState } from "../../src/runtime/lease-keeper.ts";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recorder() {
  const seen: string[] = [];
  return {
    seen,
    holder: (name: string) => ({
      onRenewed: (s: LeaseState) => seen.push(`${name}:renewed${s.cancelRequested ? ":cancel" : ""}`),
      onLost: () => seen.push(`${name}:lost`),
      onError: () => seen.push(`${name}:error`),
    }),
  };
}

describe("LeaseKeeper", () => {
  it("renews every held lease with one call per tick and reports lost and cancelled runs", async () => {
    const calls: string[][] = [];
    const keeper = new LeaseKeeper({
      intervalMs: 30,
      renew: async (ids) => {
        calls.push([...ids].sort());
        return new Map(
          ids.filter((id) => id !== "b").map((id) => [id, { cancelRequested: id === "c", cancelReason: null }]),
        );
      },
    });
    const r = recorder();
    const releases = ["A", "b", "c"].map((id) => keeper.hold(id, r.holder(id.toLowerCase())));
    await wait(45);
    expect(calls).toEqual([["a", "b", "c"]]);
    expect(r.seen.sort()).toEqual(["a:renewed", "b:lost", "c:renewed:cancel"]);
    for (const release of releases) release();
    expect(keeper.held).toBe(0);
    await wait(70);
    // No timer left running once nothing is held.
    expect(calls).toHaveLength(1);
  });

  it("reports a failed renewal to every holder and does not stack renewals on a slow database", async () => {
    let calls = 0;
    const pending: Array<{ ids: string[]; resolve: (m: Map<string, LeaseState>) => void; reject: (e: Error) => void }> =
      [];
    const keeper = new LeaseKeeper({
      intervalMs: 5,
      renew: (ids) => {
        calls++;
        return new Promise((resolve, reject) => pending.push({ ids, resolve, reject }));
      },
    });
    const r = recorder();
    const release = keeper.hold("x", r.holder("x"));
    await wait(50);
    // Ten ticks passed while the first renewal hung: still one statement in flight.
    expect(calls).toBe(1);
    pending.shift()!.reject(new Error("database down"));
    await wait(30);
    expect(r.seen).toEqual(["x:error"]);
    expect(calls).toBe(2);
    pending.shift()!.resolve(new Map([["x", { cancelRequested: false, cancelReason: null }]]));
    await wait(1);
    expect(r.seen).toEqual(["x:error", "x:renewed"]);
    release();
    for (const p of pending) p.resolve(new Map());
  });
});
