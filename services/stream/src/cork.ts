import type { Writable } from "node:stream";

// Writes to many sockets in one tick (a hub emitting the events of one NATS read to every
// client) leave as one write per socket: each socket is corked at its first write of the tick
// and every corked socket is uncorked by ONE callback at the end of the tick — not a callback
// per socket per tick.

const corked = new Set<Writable>();

function uncorkAll(): void {
  for (const socket of corked) socket.uncork();
  corked.clear();
}

/** Writes `data`, batching it with the socket's other writes of this tick. */
export function writeBatched(socket: Writable, data: Buffer): boolean {
  if (!corked.has(socket)) {
    if (corked.size === 0) process.nextTick(uncorkAll);
    corked.add(socket);
    socket.cork();
  }
  return socket.write(data);
}
