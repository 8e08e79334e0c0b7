// The console page's API module (web/src/api.ts) against a stand-in server that records what
// it receives: credentials as a header only, errors with the server's message, one
// Idempotency-Key per submission.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, ApiError, idempotencyKey } from "../web/src/api.ts";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
const seen: Seen[] = [];
let server: http.Server;
let base: string;
const KEY = `sk_${"a".repeat(64)}`;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { "Content-Type": "application/json", ...headers }).end(JSON.stringify(value));
      if (req.headers["x-api-key"] !== KEY) return json(401, { error: "Unauthorized" });
      if (req.url === "/api/v1/tasks" && req.method === "POST")
        return json(200, { task_id: "t1", status: "STATUS_CODE_OK" }, { "X-Session-ID": "s1" });
      if (req.url === "/api/v1/tasks/t1/cancel")
        return json(409, { success: false, message: "Task is already COMPLETED", status: "COMPLETED" });
      if (req.url?.startsWith("/api/v1/sessions/gone")) return json(404, { error: "Session not found" });
      if (req.method === "DELETE") return res.writeHead(204).end();
      return json(200, { tasks: [], total_count: 0 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("ApiClient", () => {
  it("sends the key as X-API-Key on every call and never in a URL", async () => {
    const client = new ApiClient({ baseUrl: base, apiKey: KEY });
    await client.verify();
    await client.listTasks({ limit: 5, offset: 10, status: "COMPLETED", session_id: "chat 1" });
    await client.deleteSession("s1");
    for (const s of seen) {
      expect(s.headers["x-api-key"]).toBe(KEY);
      expect(s.url).not.toContain(KEY);
    }
    expect(seen.map((s) => s.url)).toContain("/api/v1/tasks?limit=5&offset=10&status=COMPLETED&session_id=chat+1");
  });

  it("submits with a fresh Idempotency-Key per call and returns the session from X-Session-ID", async () => {
    const client = new ApiClient({ baseUrl: base, apiKey: KEY });
    seen.length = 0;
    const a = await client.submitTask({ query: "q", mode: "simple", context: { k: "v" } });
    await client.submitTask({ query: "q" });
    expect(a).toEqual({ task_id: "t1", session_id: "s1" });
    const keys = seen.map((s) => s.headers["idempotency-key"]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
    expect(JSON.parse(seen[0]!.body)).toEqual({ query: "q", mode: "simple", context: { k: "v" } });
    expect(seen[0]!.headers["content-type"]).toBe("application/json");
  });

  it("throws ApiError with the status and the server's message; a cancel's 409 is an answer, not an error", async () => {
    await expect(new ApiClient({ baseUrl: base, apiKey: "sk_wrong" }).verify()).rejects.toSatisfy(
      (e: unknown) => e instanceof ApiError && e.status === 401 && e.message === "Unauthorized",
    );
    const client = new ApiClient({ baseUrl: base, apiKey: KEY });
    await expect(client.getSession("gone")).rejects.toSatisfy(
      (e: unknown) => e instanceof ApiError && e.status === 404 && e.message === "Session not found",
    );
    expect(await client.cancelTask("t1")).toEqual({
      success: false,
      message: "Task is already COMPLETED",
      status: "COMPLETED",
    });
  });

  it("makes UUID v4 idempotency keys where crypto.randomUUID is missing (plain HTTP on another host)", () => {
    const original = crypto.randomUUID;
    (crypto as { randomUUID?: unknown }).randomUUID = undefined;
    try {
      const keys = new Set(Array.from({ length: 100 }, () => idempotencyKey()));
      expect(keys.size).toBe(100);
      for (const k of keys) expect(k).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    } finally {
      (crypto as { randomUUID?: unknown }).randomUUID = original;
    }
  });
});
