#!/usr/bin/env node
// `tog`: the command-line client. The sources are TypeScript run directly by Node's type
// stripping (Node >= 22.18, or 22.12+ with --experimental-strip-types), like the services.
if (!process.features?.typescript) {
  console.error(
    `tog needs Node.js >= 22.18 (this is ${process.version}); in this repository run: source scripts/ensure-node.sh`,
  );
  process.exit(2);
}
await import("../src/main.ts");
