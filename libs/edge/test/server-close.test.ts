import http from "node:http";
import { describe, expect, it } from "vitest";
import { markStreaming } from "../src/index.ts";
import { sleep, startTestApp } from "./edge-harness.ts";

// close() during a response: the response finishes, then its connection must close too, even
// when the client (a proxy's keep-alive pool) would keep it open. Otherwise a stream instance
// that ends its streams on SIGTERM waits for the proxy's idle timeout (docs/reliability.md
// "Stream instances").
describe("server close", () => {
  it("resolves soon after the responses in flight end, not after the client's keep-alive timeout", async () => {
    let end: (() => void) | undefined;
    const app = await startTestApp({
      routes: (r) => {
        r.get("/stream", (_q, s) => {
          markStreaming(s);
          s.setHeader("content-type", "text/event-stream");
          s.write("data: 0\n\n");
          end = () => s.end();
        });
      },
    });
    // A client that keeps idle sockets for 10 s, like a proxy's upstream pool.
    const agent = new http.Agent({ keepAlive: true, timeout: 10_000 });
    try {
      const body = new Promise<string>((resolve, reject) => {
        http
          .get(`${app.url}/stream`, { agent }, (res) => {
            let text = "";
            res.on("data", (d) => (text += d.toString()));
            res.on("end", () => resolve(text));
          })
          .on("error", reject);
      });
      while (!end) await sleep(10);
      const started = Date.now();
      const closed = app.close();
      await sleep(50);
      end();
      expect(await body).toBe("data: 0\n\n");
      await closed;
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      agent.destroy();
    }
  });
});
