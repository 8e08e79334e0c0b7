// A process holding many stream clients for the bench (forked by stream.bench.ts). SSE clients
// are raw sockets with just enough parsing to find each `id: <millis>-<seq>` line; WebSocket
// clients are raw sockets too, with a minimal frame parser. Every delivered event is counted per
// connection (gaps, duplicates) and its emit-to-client latency (now − the emit millis of its
// stream id) goes into a 1 ms histogram.
// Messages from the parent: {cmd:"open", ...}, {cmd:"report"}, {cmd:"reset"}, {cmd:"close"}.
import { randomBytes } from "node:crypto";
import net from "node:net";

interface OpenCommand {
  cmd: "open";
  kind: "sse" | "ws";
  host: string;
  port: number;
  path: string;
  count: number;
  taskId: string;
}

const MAX_MS = 10_000;
let histogram = new Uint32Array(MAX_MS + 1);
let delivered = 0;
let gaps = 0;
let duplicates = 0;
let closedEarly = 0;
let opened = 0;
const sockets: { close(): void }[] = [];

function record(millis: number, seq: number, state: { last: number }): void {
  const latency = Date.now() - millis;
  histogram[Math.max(0, Math.min(MAX_MS, latency))]!++;
  delivered++;
  if (state.last !== -1) {
    if (seq <= state.last) duplicates++;
    else if (seq !== state.last + 1) gaps++;
  }
  if (seq > state.last) state.last = seq;
}

function openSse(c: OpenCommand): void {
  const socket = net.connect(c.port, c.host);
  socket.setNoDelay(true);
  const state = { last: -1 };
  let headers = true;
  let rest = "";
  socket.on("connect", () =>
    socket.write(`GET ${c.path} HTTP/1.1\r\nHost: ${c.host}\r\nAccept: text/event-stream\r\n\r\n`),
  );
  socket.on("data", (chunk: Buffer) => {
    let s = rest + chunk.toString("latin1");
    if (headers) {
      const end = s.indexOf("\r\n\r\n");
      if (end < 0) {
        rest = s;
        return;
      }
      if (!s.startsWith("HTTP/1.1 200")) {
        process.stderr.write(`unexpected answer: ${s.slice(0, 200)}\n`);
        socket.destroy();
        return;
      }
      headers = false;
      opened++;
      s = s.slice(end + 4);
    }
    let from = 0;
    for (;;) {
      const at = s.indexOf("\nid: ", from);
      if (at < 0) break;
      const nl = s.indexOf("\n", at + 5);
      if (nl < 0) break;
      const dash = s.indexOf("-", at + 5);
      record(Number(s.slice(at + 5, dash)), Number(s.slice(dash + 1, nl)), state);
      from = nl;
    }
    // Keep an unfinished line (and the newline before it) for the next chunk.
    const cut = s.lastIndexOf("\n");
    rest = cut < 0 ? s : s.slice(cut);
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    if (!stopping) closedEarly++;
  });
  sockets.push({ close: () => socket.destroy() });
}

const STREAM_ID = Buffer.from('"stream_id":"');
const SEQ = Buffer.from('"seq":');

/**
 * A raw WebSocket client: handshake, then frames parsed by hand (server frames are unmasked),
 * so the load generator spends as little CPU per message as the SSE clients do. Subscribes
 * through the handshake query; answers pings (masked, as clients must).
 */
function openWs(c: OpenCommand): void {
  const socket = net.connect(c.port, c.host);
  socket.setNoDelay(true);
  const state = { last: -1 };
  let handshaking = true;
  let buffer: Buffer = Buffer.alloc(0);
  const path = `${c.path}${c.path.includes("?") ? "&" : "?"}workflow_id=${c.taskId}`;
  socket.on("connect", () =>
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${c.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    ),
  );
  socket.on("data", (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    if (handshaking) {
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      if (!buffer.subarray(0, 12).toString().startsWith("HTTP/1.1 101")) {
        process.stderr.write(`unexpected answer: ${buffer.subarray(0, 200).toString()}\n`);
        socket.destroy();
        return;
      }
      handshaking = false;
      opened++;
      buffer = buffer.subarray(end + 4);
    }
    let at = 0;
    while (buffer.length - at >= 2) {
      const opcode = buffer[at]! & 0x0f;
      let length = buffer[at + 1]! & 0x7f;
      let header = 2;
      if (length === 126) {
        if (buffer.length - at < 4) break;
        length = buffer.readUInt16BE(at + 2);
        header = 4;
      } else if (length === 127) {
        if (buffer.length - at < 10) break;
        length = Number(buffer.readBigUInt64BE(at + 2));
        header = 10;
      }
      if (buffer.length - at < header + length) break;
      const payload = buffer.subarray(at + header, at + header + length);
      at += header + length;
      if (opcode === 0x9) {
        const mask = randomBytes(4);
        const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
        socket.write(Buffer.concat([Buffer.from([0x8a, 0x80 | masked.length]), mask, masked]));
        continue;
      }
      if (opcode !== 0x1) continue;
      const s = payload.indexOf(STREAM_ID);
      const q = payload.indexOf(SEQ);
      if (s < 0 || q < 0) continue;
      const millisEnd = payload.indexOf(0x2d, s + STREAM_ID.length);
      const seqEnd = payload.indexOf(0x2c, q + SEQ.length);
      record(
        Number(payload.toString("latin1", s + STREAM_ID.length, millisEnd)),
        Number(payload.toString("latin1", q + SEQ.length, seqEnd)),
        state,
      );
    }
    buffer = at === buffer.length ? Buffer.alloc(0) : buffer.subarray(at);
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    if (!stopping) closedEarly++;
  });
  sockets.push({ close: () => socket.destroy() });
}

let stopping = false;

process.on("message", (message: { cmd: "open" | "reset" | "report" | "close" }) => {
  switch (message.cmd) {
    case "open": {
      const c = message as unknown as OpenCommand;
      let i = 0;
      // Open in small batches so the server's accept queue is not the thing measured.
      const batch = () => {
        for (let n = 0; n < 100 && i < c.count; n++, i++) (c.kind === "sse" ? openSse : openWs)(c);
        if (i < c.count) setTimeout(batch, 5);
      };
      batch();
      break;
    }
    case "reset":
      histogram = new Uint32Array(MAX_MS + 1);
      delivered = 0;
      gaps = 0;
      duplicates = 0;
      process.send!({ cmd: "reset" });
      break;
    case "report":
      process.send!({
        cmd: "report",
        opened,
        delivered,
        gaps,
        duplicates,
        closedEarly,
        histogram: Array.from(histogram),
      });
      break;
    case "close":
      stopping = true;
      for (const s of sockets) s.close();
      setTimeout(() => process.exit(0), 100);
      break;
  }
});
process.send!({ cmd: "ready" });
