import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { connectBus } from "@tog/bus";
import { createLogger } from "@tog/core";
import { describe, expect, it } from "vitest";

// `npm run nats:cluster` (docs/reliability.md "NATS"): three clustered servers whose streams take
// three replicas, and a URL `npm start` can use; Ctrl-C leaves no server behind.

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const hasNats = (() => {
  try {
    execFileSync("sh", ["-c", "command -v nats-server"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => resolve(socket.destroy() === socket));
    socket.once("error", () => resolve(false));
  });

describe.skipIf(!hasNats)("npm run nats:cluster", () => {
  it("runs three servers that replicate a stream three times, and stops them on Ctrl-C", async () => {
    const child = spawn(process.execPath, ["scripts/nats-cluster.ts"], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const m = /ready: (\S+)/.exec(out);
          if (m && out.includes("NATS_STREAM_REPLICAS=3")) resolve(m[1]!);
        });
        child.once("exit", () => reject(new Error(`exited before ready: ${out}`)));
      });
      const urls = url.split(",");
      expect(urls).toHaveLength(3);
      const bus = await connectBus({
        url,
        name: "nats-cluster-test",
        prefix: "clustertest",
        logger: createLogger({ service: "test", level: "silent" }),
      });
      try {
        const info = await bus.jsm.streams.add({
          name: "CLUSTERTEST_R3",
          subjects: ["clustertest.r3"],
          num_replicas: 3,
        });
        expect(info.config.num_replicas).toBe(3);
        expect(info.cluster?.replicas ?? []).toHaveLength(2);
      } finally {
        await bus.close();
      }
      child.kill("SIGINT");
      expect(await exited).toBe(0);
      const ports = urls.map((u) => Number(new URL(u).port));
      expect(await Promise.all(ports.map(answers))).toEqual([false, false, false]);
    } finally {
      child.kill("SIGKILL");
    }
  }, 90_000);
});
