import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

// Redocly's recommended rules, run offline with the @redocly/cli binary (a root devDependency),
// for the OpenAPI documents the project writes: the public one (libs/sdk) and the model
// catalog's own (services/model-catalog).

export interface LintProblem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
}

function redoclyBin(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve("@redocly/cli/package.json")), "bin", "cli.js");
}

/** The problems `redocly lint` finds in an OpenAPI file. */
export async function lintOpenApi(file: string): Promise<LintProblem[]> {
  // An empty working directory, so no redocly.yaml around changes the rules.
  const cwd = mkdtempSync(path.join(os.tmpdir(), "tog-lint-"));
  try {
    return await runLint(file, cwd);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

function runLint(file: string, cwd: string): Promise<LintProblem[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [redoclyBin(), "lint", file, "--format=json"],
      {
        cwd,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
        timeout: 60_000,
      },
      (_err, stdout) => {
        try {
          resolve((JSON.parse(stdout) as { problems: LintProblem[] }).problems);
        } catch (e) {
          reject(new Error(`redocly printed no JSON: ${stdout}\n${String(e)}`));
        }
      },
    );
  });
}

/**
 * Warnings accepted in both documents, each for a reason: probes answer 200/503 and have no 4xx;
 * the WebSocket route's success is 101 (not 2xx); the catalog document has no authenticated route.
 */
export const ACCEPTED_LINT_WARNINGS: ReadonlySet<string> = new Set([
  "operation-4xx-response",
  "operation-2xx-response",
  "no-unused-components",
]);
