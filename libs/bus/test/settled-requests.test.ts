import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NoRespondersError, RequestError, TimeoutError, type Msg } from "@nats-io/nats-core";
import { MuxSubscription, RequestOne } from "@nats-io/nats-core/internal";
import type { Bus } from "@tog/bus";
import { openTestBus } from "./helpers.ts";

// libs/bus/src/settled-requests.ts: an answered request is not rejected with a freshly built
// Error afterwards; every other way a request ends is the library's own.

let bus: Bus;
beforeAll(async () => {
  bus = await openTestBus("settled"); // connectBus installs the change
});
afterAll(() => bus.close());

/** The error each answered request is rejected with after its answer (a no-op on its promise). */
function rejectionAfterAnswer(): { answer: Promise<Msg>; rejectedWith: unknown[] } {
  const r = new RequestOne(new MuxSubscription(), "x", { timeout: 1_000 }, false);
  const rejectedWith: unknown[] = [];
  const reject = r.deferred.reject.bind(r.deferred);
  r.deferred.reject = (err?: unknown) => {
    rejectedWith.push(err);
    reject(err);
  };
  const msg = { subject: "x" } as Msg;
  r.resolver(null, msg);
  return { answer: r.deferred, rejectedWith };
}

describe("requests settled without an Error", () => {
  it("an answered request resolves, and no Error is built for it afterwards", async () => {
    const first = rejectionAfterAnswer();
    const second = rejectionAfterAnswer();
    await expect(first.answer).resolves.toMatchObject({ subject: "x" });
    await expect(second.answer).resolves.toMatchObject({ subject: "x" });
    expect(first.rejectedWith).toHaveLength(1);
    expect(first.rejectedWith[0]).toBeInstanceOf(RequestError);
    // One Error made once, not one per request.
    expect(second.rejectedWith[0]).toBe(first.rejectedWith[0]);
  });

  it("a request cancelled before its answer is rejected with an Error of its own", async () => {
    const made = () => {
      const r = new RequestOne(new MuxSubscription(), "x", { timeout: 1_000 }, false);
      r.cancel();
      return r.deferred.catch((err: unknown) => err);
    };
    const [a, b] = await Promise.all([made(), made()]);
    expect(a).toBeInstanceOf(RequestError);
    expect((a as Error).message).toBe("cancelled");
    expect(b).not.toBe(a);
  });

  it("real requests: answered, no responders and timeouts behave as the library says", async () => {
    const subject = bus.subject("settled", "echo");
    const sub = bus.nc.subscribe(subject, { callback: (_err, msg) => void msg.respond(msg.data) });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => bus.nc.request(subject, `m${i}`, { timeout: 2_000 })),
    );
    expect(answers.map((m) => m.string())).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`));

    const none = await bus.nc.request(bus.subject("settled", "nobody"), "x", { timeout: 2_000 }).catch((e) => e);
    expect(none).toBeInstanceOf(RequestError);
    expect((none as RequestError).isNoResponders()).toBe(true);
    expect((none as RequestError).cause).toBeInstanceOf(NoRespondersError);

    const silent = bus.subject("settled", "silent");
    const quiet = bus.nc.subscribe(silent, { callback: () => undefined });
    const late = await bus.nc.request(silent, "x", { timeout: 100 }).catch((e) => e);
    expect(late).toBeInstanceOf(TimeoutError);
    sub.unsubscribe();
    quiet.unsubscribe();
  });
});
