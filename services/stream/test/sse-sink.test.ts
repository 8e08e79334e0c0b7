import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { decodeHubEvent, type HubEvent } from "../src/hub/hub-event.ts";
import { SseSink } from "../src/sse/sse-stream.ts";
import type { StreamContext } from "../src/stream-context.ts";
import { Ticker } from "../src/ticker.ts";
import { makeEvent, silentLogger } from "./support.ts";

// The SSE sink on a real node:http server, read as raw bytes: events written straight to the
// socket must never overtake what the response itself still holds (the status line and the
// first chunk, which Node 24.22 keeps corked until the end of the tick).

const TASK = "5f0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d";
const ctx = { logger: silentLogger } as unknown as StreamContext;
const ticker = new Ticker<SseSink>(3_600_000, () => undefined);

function hubEvent(seq: number, last = false): HubEvent {
  return decodeHubEvent(JSON.stringify(makeEvent(TASK, seq, { last })), TASK)!;
}

interface Served {
  /** `res.write` calls made after the stream opened (events that did not go straight to the socket). */
  resWrites: number;
}

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** Serves every request with `script`, which drives one sink; resolves with the port. */
async function serve(script: (sink: SseSink, served: Served) => void): Promise<{ port: number; served: Served[] }> {
  const served: Served[] = [];
  server = http.createServer((_req, res) => {
    const record: Served = { resWrites: 0 };
    served.push(record);
    const sink = new SseSink(res, ctx, ticker);
    res.on("close", () => ticker.delete(sink));
    sink.open(100, []);
    const write = res.write.bind(res) as (chunk: unknown) => boolean;
    res.write = ((chunk: unknown) => {
      record.resWrites++;
      return write(chunk);
    }) as typeof res.write;
    script(sink, record);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { port: (server!.address() as AddressInfo).port, served };
}

/** Sends `requests` on one connection and collects every byte until the server stops sending for a while. */
async function rawExchange(port: number, requests: string[]): Promise<string> {
  const socket = net.connect(port, "127.0.0.1");
  let got = "";
  socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
  await new Promise((resolve) => socket.once("connect", resolve));
  for (const r of requests) {
    socket.write(r);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  socket.destroy();
  return got;
}

const GET = "GET /api/v1/stream/sse HTTP/1.1\r\nHost: x\r\n\r\n";

/** Splits raw bytes into responses: status line, and the de-chunked body of each. */
function parseChunkedResponses(raw: string): { status: string; body: string }[] {
  const out: { status: string; body: string }[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const headEnd = rest.indexOf("\r\n\r\n");
    if (!rest.startsWith("HTTP/1.1 ") || headEnd < 0) throw new Error(`not a response: ${JSON.stringify(rest)}`);
    const status = rest.slice(0, rest.indexOf("\r\n"));
    rest = rest.slice(headEnd + 4);
    let body = "";
    for (;;) {
      const nl = rest.indexOf("\r\n");
      const size = Number.parseInt(rest.slice(0, nl), 16);
      if (!Number.isFinite(size)) throw new Error(`bad chunk: ${JSON.stringify(rest.slice(0, 40))}`);
      body += rest.slice(nl + 2, nl + 2 + size);
      rest = rest.slice(nl + 2 + size + 2);
      if (size === 0) break;
    }
    out.push({ status, body });
  }
  return out;
}

const text = (e: HubEvent) => e.sse.toString("latin1");

describe("SSE sink", () => {
  it("writes events of the tick the stream opened after the status line; the connection stays usable", async () => {
    const events = [hubEvent(1), hubEvent(2), hubEvent(3, true)];
    const { port } = await serve((sink) => {
      // A replay from the hub's memory: everything in the opening tick.
      for (const e of events.slice(0, 2)) sink.send(e);
      setImmediate(() => {
        sink.send(events[2]!);
        sink.finish(events[2]!, true);
      });
    });
    const responses = parseChunkedResponses(await rawExchange(port, [GET, GET]));
    expect(responses.map((r) => r.status)).toEqual(["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"]);
    for (const r of responses) expect(r.body).toBe(`: stream open\nretry: 100\n\n${events.map(text).join("")}`);
  });

  it("writes later events, keep-alives and the closing id straight to the socket", async () => {
    const events = [hubEvent(1), hubEvent(2), hubEvent(3, true)];
    const { port, served } = await serve((sink) => {
      setTimeout(() => {
        sink.send(events[0]!);
        sink.keepAlive();
        setTimeout(() => {
          sink.send(events[1]!);
          sink.finish(events[2]!, false);
        }, 10);
      }, 10);
    });
    const [response] = parseChunkedResponses(await rawExchange(port, [GET]));
    expect(response!.body).toBe(
      `: stream open\nretry: 100\n\n${text(events[0]!)}: ping\n\n${text(events[1]!)}id: ${events[2]!.streamId}\n\n`,
    );
    expect(served[0]!.resWrites).toBe(0);
  });

  it("answers HTTP/1.0 without chunks, every event through the response", async () => {
    const events = [hubEvent(1), hubEvent(2, true)];
    const { port } = await serve((sink) => {
      sink.send(events[0]!);
      setImmediate(() => sink.finish(events[1]!, false));
    });
    const raw = await rawExchange(port, ["GET /api/v1/stream/sse HTTP/1.0\r\nHost: x\r\n\r\n"]);
    expect(raw.startsWith("HTTP/1.1 200 OK\r\n")).toBe(true);
    expect(raw.slice(raw.indexOf("\r\n\r\n") + 4)).toBe(
      `: stream open\nretry: 100\n\n${text(events[0]!)}id: ${events[1]!.streamId}\n\n`,
    );
  });
});
