// Preloaded (`node --import`) into every process devstack spawns. The parent holds an IPC
// channel to the child; when the parent dies in any way (even SIGKILL, e.g. a killed test
// worker) the channel closes, and the child shuts itself down gracefully instead of
// lingering as an orphan that keeps ports, database connections and consumers alive.

if (process.channel) {
  process.channel.unref();
  process.once("disconnect", () => {
    setTimeout(() => process.exit(1), 10_000).unref();
    process.kill(process.pid, "SIGTERM");
  });
}

export {};
