import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The commit habit of docs/contributing.md: a subject of at most 72 characters (what `git log
// --oneline` and most review tools show whole). Checked from the first commit that adopted it;
// older history stays as it is. A clone without that commit (shallow) has nothing to check.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ADOPTED = "7156317";
const MAX_SUBJECT = 72;
/** Written on branches that began before the habit was adopted and merged after it. */
const BEFORE_THE_RULE = new Set(["9436939", "8199b19"]);

function git(args: string[]): string | undefined {
  try {
    return execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return undefined;
  }
}

const hasHistory = git(["cat-file", "-e", `${ADOPTED}^{commit}`]) !== undefined;

describe("commit messages", () => {
  it.skipIf(!hasHistory)(`subjects since ${ADOPTED} are at most ${MAX_SUBJECT} characters`, () => {
    const subjects = (git(["log", "--format=%H %s", `${ADOPTED}^..HEAD`]) ?? "").split("\n").filter(Boolean);
    expect(subjects.length).toBeGreaterThan(0);
    const long = subjects.filter(
      (line) =>
        ![...BEFORE_THE_RULE].some((hash) => line.startsWith(hash)) &&
        line.slice(line.indexOf(" ") + 1).length > MAX_SUBJECT,
    );
    expect(long).toEqual([]);
  });
});
