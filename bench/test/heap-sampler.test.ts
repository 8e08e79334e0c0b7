import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

// profile.ts's PROFILE_HEAP preload (bench/tasks/lib/heap-sampler.ts) in a real process: the
// first SIGUSR2 starts sampling, the second writes a profile that holds what was allocated in
// between, collected objects included.
describe("the heap sampler", () => {
  it("profiles what a process allocates between two signals, garbage included", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tog-heap-sampler-"));
    const entry = path.join(dir, "alloc.mjs");
    // Allocates ~64 MB of short-lived arrays in a named function once told to, keeping none.
    fs.writeFileSync(
      entry,
      `function churn() { for (let i = 0; i < 4000; i++) new Array(2048).fill(i); }
       process.stdout.write("ready\\n");
       process.stdin.on("data", (d) => { if (String(d).includes("go")) { churn(); process.stdout.write("done\\n"); } });`,
    );
    const sampler = path.resolve(import.meta.dirname, "../tasks/lib/heap-sampler.ts");
    const child = spawn(process.execPath, ["--import", sampler, entry], {
      env: { PATH: process.env.PATH, PROFILE_HEAP_DIR: dir },
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
      interface HeapNode {
        callFrame: { functionName: string };
        selfSize: number;
        children: HeapNode[];
      }
      const { head } = JSON.parse(fs.readFileSync(file, "utf8")) as { head: HeapNode };
      let churned = 0;
      const walk = (n: HeapNode) => {
        if (n.callFrame.functionName === "churn") churned += n.selfSize;
        n.children.forEach(walk);
      };
      walk(head);
      // 4,000 arrays of 2,048 small integers: ≥ 32 MB, none of it alive at the end.
      expect(churned).toBeGreaterThan(30e6);
    } finally {
      child.kill();
    }
  });
});
