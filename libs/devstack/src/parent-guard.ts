// Preloaded (`node --import`) into every process devstack spawns. The parent holds an IPC
// channel to the child; when the parent dies in any way (even SIGKILL, e.g. a killed test
// worker) the channel closes, and the child shuts itself down gracefully instead of
// lingering as an orphan that keeps ports, database connections and consumers alive.
//
// The child also reports each TCP port it binds over that channel. A port picked free by the
// parent can be taken by another process before the child binds it; a readiness probe on that
// port would then be answered by the other process. The parent counts a service ready only
// once the service itself reported the port (libs/devstack/src/service-process.ts).
import { subscribe } from "node:diagnostics_channel";
import type { Server } from "node:net";
import { LISTENING_MESSAGE, type ListeningMessage } from "./listening-message.ts";

if (process.channel) {
  subscribe("tracing:net.server.listen:asyncEnd", (message) => {
    const address = (message as { server?: Server }).server?.address();
    if (address && typeof address === "object" && process.connected)
      process.send?.({ type: LISTENING_MESSAGE, port: address.port } satisfies ListeningMessage);
  });
  process.channel.unref();
  process.once("disconnect", () => {
    setTimeout(() => process.exit(1), 10_000).unref();
    process.kill(process.pid, "SIGTERM");
  });
}
