import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { securityHeaders } from "../src/security-headers.ts";

// The headers of every response (docs/security.md "Headers"): helmet's, recorded once and
// replayed per request, so each must be exactly what the document lists.

let base: string;
let close: () => void;
beforeAll(async () => {
  const app = express();
  app.use(securityHeaders);
  app.get("/data", (_req, res) => void res.json({ ok: true }));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close?.());

describe("security headers", () => {
  it("are the documented set on every response, twice in a row, without X-Powered-By", async () => {
    for (const path of ["/data", "/data"]) {
      const res = await fetch(base + path);
      await res.arrayBuffer();
      expect(Object.fromEntries([...res.headers].filter(([name]) => EXPECTED[name] !== undefined))).toEqual(EXPECTED);
      expect(res.headers.get("x-powered-by")).toBeNull();
    }
  });
});

const EXPECTED: Record<string, string> = {
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none';frame-ancestors 'none'",
  "cross-origin-resource-policy": "cross-origin",
  "referrer-policy": "no-referrer",
  "strict-transport-security": "max-age=31536000; includeSubDomains",
  "x-content-type-options": "nosniff",
  "x-frame-options": "SAMEORIGIN",
};
