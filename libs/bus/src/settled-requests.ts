import { RequestError } from "@nats-io/nats-core";
import { RequestOne } from "@nats-io/nats-core/internal";

// Why this exists (docs/performance.md "A request settled without an Error"): nats-core 3.x ends
// every answered request with `resolver()` → `cancel()`, and `cancel()` without an argument
// rejects the request's promise with `new RequestError("cancelled")`. The promise is already
// settled then, so the rejection is a no-op, but the Error still captures its stack trace:
// 3–4 µs per request on our machines, and every JetStream publish and API call is a request
// (9 % of a worker's busy time at saturation). Here `cancel()` of a request that was already
// answered rejects with one Error built once instead; every other cancel (a timeout, the
// connection closing, a caller's abort) is the library's own, with its own Error.

const settled = Symbol("tog.settled");
const alreadySettled = new RequestError("cancelled");
let installed = false;

type Settling = RequestOne & { [settled]?: true };

/** Applies the change to nats-core's RequestOne once per process; later calls do nothing. */
export function settleRequestsWithoutError(): void {
  if (installed) return;
  installed = true;
  const proto = RequestOne.prototype;
  const { resolver, cancel } = proto;
  proto.resolver = function (this: Settling, err, msg) {
    this[settled] = true;
    resolver.call(this, err, msg);
  };
  proto.cancel = function (this: Settling, err) {
    cancel.call(this, err ?? (this[settled] ? alreadySettled : undefined));
  };
}
