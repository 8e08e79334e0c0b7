import { describe, expect, it } from "vitest";
import { CallBatcher, type Settled } from "../src/call-batcher.ts";

interface ManualCall {
  items: number[];
  /** Reports one item's outcome, as a streamed answer would. */
  settle: (index: number, outcome: Settled<string>) => void;
  /** Ends the call: every item answered `r<item>`, or the call failed. */
  end: (error?: Error) => void;
  /** Ends the call without answering the items not answered yet. */
  endShort: () => void;
}

/** A send whose calls the test answers by hand. */
function manualSend() {
  const calls: ManualCall[] = [];
  const send = (items: number[], settle: (index: number, outcome: Settled<string>) => void) =>
    new Promise<void>((resolve, reject) => {
      calls.push({
        items,
        settle,
        end: (error) => {
          if (error) return reject(error);
          items.forEach((item, i) => settle(i, { ok: true, value: `r${item}` }));
          resolve();
        },
        endShort: () => resolve(),
      });
    });
  return { calls, send };
}

const tick = () => new Promise((r) => setImmediate(r));
const options = { maxBatch: 100, stallMs: 60_000 };

describe("CallBatcher", () => {
  it("sends at once while below maxInFlight; later items wait and go out together", async () => {
    const m = manualSend();
    const b = new CallBatcher({ ...options, send: m.send, maxInFlight: 2 });
    const results = [1, 2, 3, 4, 5].map((i) => b.add(i));
    expect(m.calls.map((c) => c.items)).toEqual([[1], [2]]);
    m.calls[0]!.end();
    await tick();
    // 3, 4 and 5 arrived while two calls were in flight: one call for all three.
    expect(m.calls.map((c) => c.items)).toEqual([[1], [2], [3, 4, 5]]);
    m.calls[1]!.end();
    m.calls[2]!.end();
    expect(await Promise.all(results)).toEqual(["r1", "r2", "r3", "r4", "r5"]);
  });

  it("settles each item with its own outcome as soon as it arrives", async () => {
    const m = manualSend();
    const b = new CallBatcher({ ...options, send: m.send, maxInFlight: 1 });
    const first = b.add(0);
    const rest = [1, 2, 3].map((i) =>
      b.add(i).then(
        (v) => ({ v }),
        (e: unknown) => ({ e }),
      ),
    );
    m.calls[0]!.end();
    await first;
    await tick();
    const call = m.calls[1]!;
    const boom = new Error("item 2 refused");
    call.settle(1, { ok: false, error: boom });
    // Item 2's answer does not wait for the others of its call.
    expect(await rest[1]).toEqual({ e: boom });
    call.settle(2, { ok: true, value: "r3" });
    call.settle(0, { ok: true, value: "r1" });
    call.settle(0, { ok: true, value: "again" }); // a second outcome for an item is ignored
    expect(await Promise.all(rest)).toEqual([{ v: "r1" }, { e: boom }, { v: "r3" }]);
  });

  it("a failed call fails the items it had not answered; one that ends short fails the rest; later items still go out", async () => {
    const m = manualSend();
    const b = new CallBatcher({ ...options, send: m.send, maxInFlight: 1 });
    const a = b.add(1).catch((e: unknown) => e);
    const [c, d, e] = [2, 3, 4].map((i) => b.add(i).catch((err: unknown) => err));
    const down = new Error("unavailable");
    m.calls[0]!.end(down);
    await tick();
    expect(m.calls[1]!.items).toEqual([2, 3, 4]);
    m.calls[1]!.settle(0, { ok: true, value: "r2" });
    m.calls[1]!.end(down);
    expect(await a).toBe(down);
    expect(await c).toBe("r2");
    expect(await d).toBe(down);
    expect(await e).toBe(down);
    const f = b.add(5).catch((err: unknown) => err);
    const g = b.add(6).catch((err: unknown) => err);
    // A call that ends without an outcome for an item: that item fails, not hangs.
    await tick();
    expect(m.calls[2]!.items).toEqual([5]);
    m.calls[2]!.endShort();
    expect(String(await f)).toContain("no outcome for item 0 of 1");
    await tick();
    m.calls[3]!.end();
    expect(await g).toBe("r6");
  });

  it("never puts more than maxBatch items in one call", async () => {
    const m = manualSend();
    const b = new CallBatcher({ send: m.send, maxInFlight: 1, maxBatch: 3, stallMs: 60_000 });
    const all = [0, 1, 2, 3, 4, 5, 6].map((i) => b.add(i));
    for (let i = 0; i < 3; i++) {
      m.calls[i]!.end();
      await tick();
    }
    expect(m.calls.map((c) => c.items)).toEqual([[0], [1, 2, 3], [4, 5, 6]]);
    expect(await Promise.all(all)).toHaveLength(7);
  });

  it("a call in flight past stallMs no longer holds the next items back", async () => {
    const m = manualSend();
    const b = new CallBatcher({ send: m.send, maxInFlight: 1, maxBatch: 100, stallMs: 30 });
    const stuck = b.add(1);
    const next = [b.add(2), b.add(3)];
    expect(m.calls).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 60));
    expect(m.calls.map((c) => c.items)).toEqual([[1], [2, 3]]);
    m.calls[1]!.end();
    expect(await Promise.all(next)).toEqual(["r2", "r3"]);
    // The stalled call returning late frees nothing twice: one slot, so 4 and 5 are two calls.
    m.calls[0]!.end();
    expect(await stuck).toBe("r1");
    const later = [b.add(4), b.add(5)];
    expect(m.calls.map((c) => c.items)).toEqual([[1], [2, 3], [4]]);
    m.calls[2]!.end();
    await tick();
    expect(m.calls[3]?.items).toEqual([5]);
    m.calls[3]!.end();
    expect(await Promise.all(later)).toEqual(["r4", "r5"]);
  });
});
