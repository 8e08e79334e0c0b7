import { afterEach, describe, expect, it } from "vitest";
import { createLoadShedder, type LoadShedder } from "../src/index.ts";
import { sleep, startTestApp, type TestApp } from "./edge-harness.ts";

// The gateway's door (docs/reliability.md "Overload"): beyond the bound in flight, or while the
// event loop is late, a request gets 503 + Retry-After JSON at once; probes never do.

let app: TestApp | undefined;
let shedder: LoadShedder | undefined;
afterEach(async () => {
  shedder?.stop();
  await app?.close();
  app = undefined;
  shedder = undefined;
});

async function start(options: Parameters<typeof createLoadShedder>[0]) {
  shedder = createLoadShedder(options);
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  app = await startTestApp({
    shedder,
    routes: (r) => {
      r.get("/hold", async (_q, s) => {
        await held;
        s.json({ ok: true });
      });
      r.get("/fast", (_q, s) => void s.json({ ok: true }));
      r.get("/health", (_q, s) => void s.json({ status: "healthy" }));
    },
  });
  return { url: app.url, release };
}

describe("load shedding", () => {
  it("answers 503 + Retry-After at once beyond maxInFlight, and serves again once requests end", async () => {
    const { url, release } = await start({ maxInFlight: 3, maxEventLoopDelayMs: 0, exempt: (p) => p === "/health" });
    const holding = Array.from({ length: 3 }, () => fetch(`${url}/hold`));
    for (let i = 0; i < 50 && shedder!.inFlight < 3; i++) await sleep(10);
    expect(shedder!.inFlight).toBe(3);

    const started = Date.now();
    const shed = await fetch(`${url}/fast`);
    expect(Date.now() - started).toBeLessThan(500);
    expect(shed.status).toBe(503);
    expect(shed.headers.get("retry-after")).toBe("1");
    expect(await shed.json()).toEqual({ error: "System overloaded" });
    expect((await fetch(`${url}/health`)).status).toBe(200);

    release();
    for (const res of await Promise.all(holding)) expect(res.status).toBe(200);
    expect((await fetch(`${url}/fast`)).status).toBe(200);
    expect(shedder!.shed.inFlight).toBe(1);
    expect(shedder!.inFlight).toBe(0);
  });

  it("sheds while the event loop is delayed beyond maxEventLoopDelayMs, then recovers", async () => {
    const { url } = await start({ maxInFlight: 0, maxEventLoopDelayMs: 100, exempt: (p) => p === "/health" });
    expect((await fetch(`${url}/fast`)).status).toBe(200);
    // Block the loop for 300 ms; the window that saw it decides within 0.5 s and holds 0.5 s.
    const until = Date.now() + 300;
    while (Date.now() < until) {
      // busy: the process gets no turn
    }
    let shed: Response | undefined;
    for (let i = 0; i < 20 && !shed; i++) {
      const res = await fetch(`${url}/fast`);
      if (res.status === 503) shed = res;
      else await sleep(50);
    }
    expect(shed?.status).toBe(503);
    expect(shed?.headers.get("retry-after")).toBe("1");
    expect(shedder!.shed.eventLoopDelay).toBeGreaterThanOrEqual(1);
    // Probes pass and, with the loop on time again, so does everything else.
    expect((await fetch(`${url}/health`)).status).toBe(200);
    await sleep(1_100);
    expect((await fetch(`${url}/fast`)).status).toBe(200);
  });
});
