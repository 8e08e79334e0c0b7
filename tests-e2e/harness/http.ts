import { randomBytes } from "node:crypto";

export interface JsonResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON body, or undefined when the body was empty. */
  body: T;
  /** The raw body text. */
  text: string;
}

/** fetch + JSON parse; never throws for HTTP error statuses. */
export async function request<T = unknown>(url: string, init: RequestInit = {}): Promise<JsonResponse<T>> {
  const res = await fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(15_000) });
  const text = await res.text();
  let body: unknown;
  if (text.length > 0 && (res.headers.get("content-type") ?? "").includes("json")) body = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: body as T, text };
}

/** A valid W3C traceparent with fresh ids. */
export function newTraceparent(): { header: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString("hex");
  const parentId = randomBytes(8).toString("hex");
  return { header: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

/** An API key of the right format that no database holds. */
export function unknownApiKey(): string {
  return `sk_${randomBytes(32).toString("hex")}`;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, { security?: unknown[] } | unknown>>;
}

/** "GET /api/v1/tasks"-style names of every operation an OpenAPI document lists. */
export function operationsOf(doc: OpenApiDocument): Set<string> {
  const ops = new Set<string>();
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    for (const method of Object.keys(item)) {
      if (["get", "post", "put", "patch", "delete"].includes(method)) ops.add(`${method.toUpperCase()} ${p}`);
    }
  }
  return ops;
}

/** The operations the running gateway documents (`GET <baseUrl>/openapi.json`). */
export async function gatewayOperations(baseUrl: string): Promise<Set<string>> {
  const res = await request<OpenApiDocument>(`${baseUrl}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  return operationsOf(res.body);
}
