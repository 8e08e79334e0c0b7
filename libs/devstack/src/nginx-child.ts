// Runs nginx (argv: binary, arguments) as the child of this small process, which devstack starts
// with its parent guard (parent-guard.ts): nginx cannot notice its parent dying, this process
// can. When the parent dies, the guard sends this process SIGTERM and nginx gets it too, so a
// killed test worker or supervisor never leaves an nginx holding its port.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";

const [bin, ...args] = process.argv.slice(2);
if (!bin) {
  process.stderr.write("usage: nginx-child.ts <nginx> [arguments]\n");
  process.exit(2);
}
const nginx = spawn(bin, args, { stdio: ["ignore", "ignore", "inherit"] });
// SIGHUP reloads, SIGQUIT stops gracefully, SIGTERM/SIGINT stop at once: nginx's own meanings.
for (const signal of ["SIGHUP", "SIGQUIT", "SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => nginx.kill(signal === "SIGINT" ? "SIGTERM" : signal));
}
nginx.on("error", (err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
nginx.on("exit", (code, signal) => {
  // nginx's prefix directory (configuration, temp files) goes with it
  const prefix = args[args.indexOf("-p") + 1];
  if (args.includes("-p") && prefix) rmSync(prefix, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
