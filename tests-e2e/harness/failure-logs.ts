import { beforeEach } from "vitest";
import { runningStacks } from "./running-stacks.ts";

// Setup file of the e2e project (vitest.config.ts): when a test fails, the warnings and errors
// its services logged are printed, so a failure that does not reproduce locally (a CI run on a
// loaded machine) still says what the services saw. Only warnings and errors (the services log
// pino's level labels), the last few per service.
const PER_SERVICE = 15;
const SHOWN = new Set(["warn", "error", "fatal"]);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    for (const stack of runningStacks) {
      for (const service of stack.services) {
        const lines = service
          .logs()
          .filter((r) => SHOWN.has(String(r.level)))
          .slice(-PER_SERVICE);
        if (lines.length === 0) continue;
        process.stderr.write(
          `[e2e] ${service.name} (pid ${service.pid}): last warnings and errors before the failure\n${lines.map((l) => JSON.stringify(l)).join("\n")}\n`,
        );
      }
    }
  });
});
