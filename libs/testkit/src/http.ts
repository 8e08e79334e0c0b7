// One HTTP call against an app under test, answered as status, headers, parsed body and text;
// shared by the gateway's and the session service's in-process test apps.

export interface CallOptions {
  /** Sent as `X-API-Key`. */
  key?: string;
  /** Serialized as JSON with `Content-Type: application/json`. */
  json?: unknown;
  /** Sent as is (set `headers` for its Content-Type). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  /** The JSON body, or undefined when the body is empty or not JSON. */
  body: T;
  text: string;
}

export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers["X-API-Key"] = options.key;
  let body: string | undefined = options.raw;
  if (options.json !== undefined) {
    headers["Content-Type"] ??= "application/json";
    body = JSON.stringify(options.json);
  }
  const res = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}
