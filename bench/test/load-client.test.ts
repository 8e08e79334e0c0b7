import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { connect } from "@nats-io/transport-node";
import { testInfraConfig, uniqueId } from "@tog/testkit";
import { describe, expect, it } from "vitest";
import type { LoadJob } from "../tasks/load-client.ts";
import { runLoad } from "../tasks/lib/load.ts";

// The open loop's accounting (bench/tasks/load-client.ts): what each answer counts as, and the
// task ids it reads from the answers, matched to WORKFLOW_COMPLETED events on the real NATS.

/** Serves POST /tasks: every third request 500, the others 201 with a fresh task id. */
async function taskServer(onTask: (id: string) => void): Promise<{ url: string; close: () => void }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      n += 1;
      if (n % 3 === 0) {
        res.writeHead(500, { "content-type": "application/json" }).end('{"error":"Internal server error"}');
        return;
      }
      const id = randomUUID();
      res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ task_id: id, status: "QUEUED" }));
      onTask(id);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tasks`, close: () => server.close() };
}

/** One second of the open loop at `rate` against `url`. */
const openLoop = (url: string, rate: number, more: Partial<LoadJob> = {}) =>
  runLoad({ mode: "rate", url, body: "{}", rate, seconds: 1, warmupSeconds: 0, ...more });

describe("the load client's open loop", () => {
  it("counts non-2xx answers and refused connections apart", async () => {
    const server = await taskServer(() => undefined);
    try {
      const result = await runLoad({
        mode: "rate",
        url: server.url,
        body: "{}",
        rate: 60,
        seconds: 1,
        warmupSeconds: 0,
      });
      expect(result.requests).toBeGreaterThanOrEqual(59);
      expect(result.non2xx).toBe(Math.floor(result.requests / 3));
      expect(result.errors).toBe(0);
    } finally {
      server.close();
    }
    const refused = await runLoad({
      mode: "rate",
      url: server.url,
      body: "{}",
      rate: 20,
      seconds: 1,
      warmupSeconds: 0,
    });
    expect(refused.errors).toBe(refused.requests);
    expect(refused.non2xx).toBe(0);
  });

  it("times each accepted task to its WORKFLOW_COMPLETED by the id in its answer", async () => {
    const prefix = uniqueId("bench");
    const nc = await connect({ servers: testInfraConfig.TEST_NATS_URL });
    // Each task completes 20 ms after its answer, as one message of two events (the terminal one last).
    const server = await taskServer((id) =>
      setTimeout(() => {
        const started = JSON.stringify({ workflow_id: id, type: "WORKFLOW_STARTED", seq: 1 });
        const completed = JSON.stringify({ workflow_id: id, type: "WORKFLOW_COMPLETED", seq: 2 });
        nc.publish(`${prefix}.events.${id}`, `${started}\n${completed}`);
      }, 20),
    );
    try {
      const result = await openLoop(server.url, 60, {
        nats: { url: testInfraConfig.TEST_NATS_URL, prefix },
        drainSeconds: 5,
      });
      const accepted = result.requests - result.non2xx;
      expect(result.completion?.expected).toBe(result.requests);
      expect(result.completion?.count).toBe(accepted);
      expect(result.completion?.p50).toBeGreaterThanOrEqual(20);
    } finally {
      server.close();
      await nc.drain();
    }
  });
});
