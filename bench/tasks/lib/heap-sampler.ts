// Profiling aid, preloaded by profile.ts with PROFILE_HEAP=1 (NODE_OPTIONS `--import`): V8's
// sampling heap profiler, collected objects included, so the profile shows what a request
// allocates, not only what it keeps. The first SIGUSR2 starts sampling, the second writes the
// profile to `<PROFILE_HEAP_DIR>/<pid>.heapprofile` (docs/performance.md "Profiling").
import fs from "node:fs";
import path from "node:path";
import { Session } from "node:inspector/promises";

const dir = process.env.PROFILE_HEAP_DIR;
// PROFILE_HEAP_PROMOTED=1: objects that die young are left out, so the profile shows what
// survived the young generation (what scavenges copy and promote, and full collections free).
const promotedOnly = process.env.PROFILE_HEAP_PROMOTED === "1";
if (dir) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on("SIGUSR2", () => {
    void (async () => {
      if (!sampling) {
        sampling = true;
        await session.post("HeapProfiler.startSampling", {
          samplingInterval: 16_384,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: !promotedOnly,
        });
        return;
      }
      const { profile } = await session.post("HeapProfiler.stopSampling");
      fs.writeFileSync(path.join(dir, `${process.pid}.heapprofile`), JSON.stringify(profile));
    })();
  });
}
