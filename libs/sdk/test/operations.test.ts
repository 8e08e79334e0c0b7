// Every operation of the gateway's OpenAPI document has an SDK call: each public method is called
// once against a recording fetch (and a recording WebSocket), and the set of (method, path
// template) they hit must be the document's. A route added to the gateway without an SDK call
// fails here. The real answers to those calls: tests-e2e/clients/sdk.test.ts.
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { TogClient, type WebSocketConstructor } from "../src/index.ts";

type Doc = { paths: Record<string, Record<string, { operationId?: string }>> };
const doc = JSON.parse(readFileSync(path.join(import.meta.dirname, "../openapi/gateway-api.json"), "utf8")) as Doc;
/** The same endpoints as /api/v1/health and /api/v1/readiness, at the server root for Shannon's clients. */
const ROOT_ALIASES = new Set(["GET /health", "GET /readiness"]);

const METHODS = new Set(["get", "post", "put", "patch", "delete"]);
const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
  Object.keys(ops)
    .filter((m) => METHODS.has(m))
    .map((m) => `${m.toUpperCase()} ${p}`),
);
const templates = Object.keys(doc.paths).map((p) => ({ p, re: new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`) }));
const templateOf = (pathname: string) => templates.find((t) => t.re.test(pathname))?.p ?? `unknown ${pathname}`;

const terminal = {
  workflow_id: "t",
  type: "WORKFLOW_COMPLETED",
  agent_id: "a",
  message: "",
  timestamp: "2026-01-01T00:00:00Z",
  seq: 1,
  stream_id: "1-1",
  data: {},
};
/** One body that every JSON answer can be read as: empty pages, a terminal task. */
const body = {
  task_id: "t",
  workflow_id: "t",
  stream_url: "/api/v1/stream/sse?workflow_id=t",
  status: "TASK_STATUS_COMPLETED",
  message: "ok",
  tasks: [],
  sessions: [],
  events: [],
  turns: [],
  total_count: 0,
  count: 0,
  next_after_seq: null,
  total: 0,
  access_token: "x",
  token_type: "Bearer",
};

it("has a call for every operation of the OpenAPI document", async () => {
  const hit = new Set<string>();
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const method = init?.method ?? "GET";
    hit.add(`${method} ${templateOf(url.pathname)}`);
    if (url.pathname === "/api/v1/stream/sse")
      return new Response(`id: 1-1\nevent: WORKFLOW_COMPLETED\ndata: ${JSON.stringify(terminal)}\n\n`, {
        headers: { "Content-Type": "text/event-stream" },
      });
    if (method === "DELETE") return new Response(null, { status: 204 });
    if (url.pathname.endsWith("/cancel")) return Response.json(body, { status: 202 });
    return Response.json(body);
  };
  class RecordingWebSocket {
    readyState = 0;
    onopen: (() => void) | null = null;
    onmessage: ((e: { data: string }) => void) | null = null;
    onclose: ((e: { code: number; reason: string }) => void) | null = null;
    onerror: (() => void) | null = null;
    constructor(url: string) {
      hit.add(`GET ${templateOf(new URL(url).pathname)}`);
      setTimeout(() => {
        this.readyState = 1;
        this.onopen?.();
      }, 0);
    }
    send(): void {
      setTimeout(() => this.onmessage?.({ data: JSON.stringify(terminal) }), 0);
    }
    close(): void {
      this.readyState = 3;
    }
  }
  const tog = new TogClient({ baseUrl: "http://api.test", apiKey: "sk_test", fetch, maxRetries: 0 });
  const drain = async (it: AsyncIterable<unknown>) => {
    for await (const _ of it) void _;
  };

  await tog.tasks.submit({ query: "q" });
  await drain((await tog.tasks.submitAndStream({ query: "q" })).events);
  await tog.tasks.get("t");
  await drain(tog.tasks.list());
  await tog.tasks.waitUntilDone("t");
  await tog.tasks.cancel("t");
  await drain(tog.tasks.events("t"));
  await tog.tasks.timeline("t");
  await tog.approvals.approve("t", "a");
  await drain(tog.stream("t"));
  await drain(tog.stream("t", { transport: "ws", WebSocket: RecordingWebSocket as unknown as WebSocketConstructor }));
  await drain(tog.sessions.list());
  await tog.sessions.get("s");
  await tog.sessions.history("s");
  await drain(tog.sessions.turns("s"));
  await tog.sessions.rename("s", "title");
  await tog.sessions.delete("s");
  await tog.health();
  await tog.readiness();
  await tog.openApi();
  await tog.accessToken();

  expect([...hit].sort()).toEqual(documented.filter((op) => !ROOT_ALIASES.has(op)).sort());
});
