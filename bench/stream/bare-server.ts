// The baseline of the stream bench: the least an SSE fan-out can be. node:http, one core NATS
// subscription per task, each event framed once and written to every client. No auth, no
// ownership, no replay, no keep-alive, no buffer bound.
//   NATS_URL, NATS_PREFIX, PORT (0 = any); prints {"port": n} once listening.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { connect, type Subscription } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
const prefix = process.env.NATS_PREFIX ?? "tog";
const tasks = new Map<string, { clients: Set<http.ServerResponse>; sub: Subscription }>();

function task(id: string) {
  let w = tasks.get(id);
  if (!w) {
    const clients = new Set<http.ServerResponse>();
    const sub = nc.subscribe(`${prefix}.events.${id}`, {
      callback: (_err, msg) => {
        const text = msg.string();
        const event = JSON.parse(text) as { stream_id: string; type: string };
        const frame = Buffer.from(`id: ${event.stream_id}\nevent: ${event.type}\ndata: ${text}\n\n`);
        for (const res of clients) res.write(frame);
      },
    });
    w = { clients, sub };
    tasks.set(id, w);
  }
  return w;
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  const id = url.searchParams.get("workflow_id");
  if (!id) {
    res.writeHead(400).end();
    return;
  }
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no" });
  res.write(": open\n\n");
  const w = task(id);
  w.clients.add(res);
  res.on("close", () => w.clients.delete(res));
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on("SIGTERM", () => process.exit(0));
