import { z } from "zod";
import { ValidationError } from "@tog/core";
import { ToolError } from "../errors.ts";
import { defineTool } from "../tool.ts";

// Deny by default: only hosts named in TOOL_HTTP_FETCH_ALLOWED_HOSTS can be reached, matched on
// the exact host (or host:port). Redirects are not followed, since one could lead off the list.

export const DEFAULT_HTTP_FETCH_MAX_BYTES = 256 * 1024;

export interface HttpFetchOptions {
  /** `host` (any port) or `host:port`, case-insensitive; IPv6 in brackets: `[::1]:8080`. */
  allowedHosts?: readonly string[];
  maxBytes?: number;
}

const parameters = z
  .object({
    url: z.string().min(1).max(2_000).describe("Absolute http(s) URL on an allowed host"),
    headers: z
      .record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(1_000))
      .optional()
      .describe('Extra request headers, e.g. {"accept": "application/json"}'),
  })
  .strict();

function isAllowed(url: URL, allowed: ReadonlySet<string>): boolean {
  const host = url.hostname.toLowerCase();
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
  return allowed.has(host) || allowed.has(`${host}:${port}`);
}

async function readLimited(
  response: Response,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ body: string; truncated: boolean }> {
  if (!response.body) return { body: "", truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    while (true) {
      if (signal.aborted) throw signal.reason;
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      chunks.push(value.byteLength > room ? value.subarray(0, room) : value);
      size += Math.min(value.byteLength, room);
      if (value.byteLength > room) {
        truncated = true;
        break;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return { body: new TextDecoder().decode(Buffer.concat(chunks)), truncated };
}

export function createHttpFetchTool(options: HttpFetchOptions = {}) {
  const allowed: ReadonlySet<string> = new Set(
    (options.allowedHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean),
  );
  const maxBytes = options.maxBytes ?? DEFAULT_HTTP_FETCH_MAX_BYTES;
  const hostList = allowed.size === 0 ? "none (every fetch is refused)" : [...allowed].join(", ");

  return defineTool({
    name: "http_fetch",
    description: `Fetches a URL with GET and returns status, content type and the body as text (at most ${maxBytes} bytes). Allowed hosts: ${hostList}.`,
    parameters,
    riskLevel: "high",
    timeoutSeconds: 15,
    async execute(args, context) {
      let url: URL;
      try {
        url = new URL(args.url);
      } catch {
        throw new ValidationError(`url: "${args.url}" is not an absolute URL`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new ValidationError(`url: only http and https are supported, not ${url.protocol}`);
      }
      if (!isAllowed(url, allowed)) {
        throw new ToolError(
          "TOOL_EXECUTION_FAILED",
          `Host "${url.host}" is not on the http_fetch allow-list (allowed: ${hostList})`,
          {
            recoverable: false,
          },
        );
      }
      let response: Response;
      try {
        response = await fetch(url, {
          method: "GET",
          headers: args.headers,
          redirect: "manual",
          signal: context.signal,
        });
      } catch (cause) {
        if (context.signal.aborted) throw context.signal.reason;
        throw new ToolError("TOOL_EXECUTION_FAILED", `Fetching ${url.href} failed: ${(cause as Error).message}`, {
          cause,
        });
      }
      const { body, truncated } = await readLimited(response, maxBytes, context.signal);
      const data = {
        url: url.href,
        status: response.status,
        content_type: response.headers.get("content-type"),
        location: response.headers.get("location"),
        body,
        truncated,
      };
      return { data, text: `HTTP ${response.status}${truncated ? " (truncated)" : ""}\n${body}` };
    },
  });
}
