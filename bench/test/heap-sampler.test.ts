import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

// profile.ts's PROFILE_HEAP preload (bench/tasks/lib/heap-sampler.ts) in a real process: the
// first SIGUSR2 starts sampling, the second writes a profile that holds what was allocated in
// between, collected objects included; with PROFILE_HEAP_PROMOTED=1, only what outlived the
// young generation.

// Once told to: `keep` allocates ~16 MB of arrays and holds them while `churn` allocates ~64 MB
// of short-lived ones (enough for several minor collections, which promote what `keep` holds);
// then both are dropped.
const SCRIPT = `
function keep() { const kept = []; for (let i = 0; i < 1000; i++) kept.push(new Array(2048).fill(i)); return kept; }
function churn() { for (let i = 0; i < 4000; i++) new Array(2048).fill(i); }
process.stdout.write("ready\\n");
process.stdin.on("data", (d) => {
  if (!String(d).includes("go")) return;
  let kept = keep();
  churn();
  kept = undefined;
  process.stdout.write("done\\n");
});`;

interface HeapNode {
  callFrame: { functionName: string };
  selfSize: number;
  children: HeapNode[];
}

/** Bytes sampled per function of SCRIPT between the two signals. */
async function profileBytes(env: Record<string, string>): Promise<Record<string, number>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tog-heap-sampler-"));
  const entry = path.join(dir, "alloc.mjs");
  fs.writeFileSync(entry, SCRIPT);
  const sampler = path.resolve(import.meta.dirname, "../tasks/lib/heap-sampler.ts");
  const child = spawn(process.execPath, ["--import", sampler, entry], {
    env: { PATH: process.env.PATH, PROFILE_HEAP_DIR: dir, ...env },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const said = (word: string) =>
    new Promise<void>((resolve) => child.stdout!.on("data", (d) => String(d).includes(word) && resolve()));
  try {
    await said("ready");
    child.kill("SIGUSR2");
    await new Promise((r) => setTimeout(r, 300));
    child.stdin!.write("go\n");
    await said("done");
    child.kill("SIGUSR2");
    const file = path.join(dir, `${child.pid}.heapprofile`);
    for (let i = 0; i < 50 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
    const { head } = JSON.parse(fs.readFileSync(file, "utf8")) as { head: HeapNode };
    const bytes: Record<string, number> = { keep: 0, churn: 0 };
    const walk = (n: HeapNode) => {
      const name = n.callFrame.functionName;
      if (name in bytes) bytes[name]! += n.selfSize;
      n.children.forEach(walk);
    };
    walk(head);
    return bytes;
  } finally {
    child.kill();
  }
}

describe("the heap sampler", () => {
  it("profiles what a process allocates between two signals, garbage included", async () => {
    const bytes = await profileBytes({});
    // 4,000 arrays of 2,048 small integers: ≥ 32 MB, none of it alive at the end.
    expect(bytes.churn).toBeGreaterThan(30e6);
    expect(bytes.keep).toBeGreaterThan(12e6);
  });

  it("with PROFILE_HEAP_PROMOTED=1, leaves out what died young", async () => {
    const bytes = await profileBytes({ PROFILE_HEAP_PROMOTED: "1" });
    // What `keep` held outlived the minor collections `churn` caused; what `churn` made did not,
    // except what a full collection happened to free while it was still young (those count as
    // collected by the major GC, so a few MB of the 32 stay in).
    expect(bytes.keep).toBeGreaterThan(12e6);
    expect(bytes.churn).toBeLessThan(15e6);
  });
});
