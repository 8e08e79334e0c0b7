import { describe, expect, it } from "vitest";
import { nginxConfig } from "../src/index.ts";

// What nginx is told per route (router.test.ts runs the routes themselves through nginx).
describe("nginx configuration", () => {
  const config = nginxConfig({
    port: 8080,
    dir: "/tmp/x",
    runAsRoot: false,
    routes: [
      { prefix: "/api/v1", targets: ["http://127.0.0.1:1"], proxyTimeoutMs: 60_000 },
      { prefix: "/api/v1/stream", targets: ["http://127.0.0.1:2"] },
    ],
  });
  const location = (path: string) => config.split("\n").find((l) => l.trim().startsWith(`location ${path} `)) ?? "";

  it("relays a bounded route's responses through 64 KiB, a stream's through nginx's one page", () => {
    expect(config).toContain("proxy_buffering off;");
    expect(location("/api/v1/")).toContain("proxy_buffer_size 64k;");
    expect(location("/api/v1/")).toContain("proxy_read_timeout 60s;");
    expect(location("/api/v1/stream/")).not.toContain("proxy_buffer_size");
    expect(location("/api/v1/stream/")).toContain("proxy_read_timeout 86400s;");
  });
});
