// `npm run nats:cluster`: three nats-server processes with JetStream in one cluster, on free local
// ports, to run the system on NATS as production does (docs/reliability.md "NATS"). Prints the
// variables to give `npm start`; Ctrl-C stops the servers and removes their data.
import { execFileSync } from "node:child_process";
import { ownServersDir, startOwnNats } from "@tog/tests-e2e";

try {
  execFileSync("sh", ["-c", "command -v nats-server"], { stdio: "ignore" });
} catch {
  process.stderr.write("nats-server not found: install it (scripts/ensure-infra.sh does) and run this again\n");
  process.exit(2);
}

const dir = ownServersDir("tog-nats-cluster");
const nats = await startOwnNats(dir.dir, { cluster: 3 });
process.stdout.write(
  [
    `NATS cluster of 3 ready: ${nats.url}`,
    "In another terminal:",
    `  NATS_URL=${nats.url} NATS_STREAM_REPLICAS=3 npm start`,
    "Ctrl-C stops the three servers.",
    "",
  ].join("\n"),
);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void nats
      .stopAll()
      .finally(() => dir.remove())
      .finally(() => process.exit(0));
  });
}
// Stay up until a signal.
setInterval(() => undefined, 1 << 30);
