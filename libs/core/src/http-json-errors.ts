import type http from "node:http";
import type { Duplex } from "node:stream";

// Node's HTTP server answers requests its parser rejects (unknown method, malformed request line
// or header, oversized headers, read timeout) and unmet `Expect` headers itself, with an empty
// body. Every error a client can receive is `{"error": ...}` JSON (docs/api.md "Errors")
// (docs/security.md), so every HTTP server of the system (services and the dev router) installs
// these handlers.

const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  413: "Payload Too Large",
  417: "Expectation Failed",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

/**
 * A complete HTTP/1.1 response with a JSON error body that closes the connection, as raw bytes.
 * `details` are added to the body after `error` (e.g. a 429's `retry_after`).
 */
export function rawJsonError(
  status: number,
  message: string,
  headers: Record<string, string> = {},
  details: Record<string, unknown> = {},
): string {
  const body = JSON.stringify({ error: message, ...details });
  let head = `HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}\r\nContent-Type: application/json; charset=utf-8\r\n`;
  head += "X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n";
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  return `${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** Status and message for an error Node's HTTP parser or server timers raised on a connection. */
export function clientErrorResponse(err: NodeJS.ErrnoException): { status: number; message: string } {
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, message: "Request header fields too large" };
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "ERR_HTTP_HEADERS_TIMEOUT":
      return { status: 408, message: "Request timeout" };
    case "HPE_INVALID_METHOD":
      return { status: 400, message: "Bad request: unknown method" };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, message: "Request body too large" };
    default:
      return { status: 400, message: "Bad request: malformed HTTP request" };
  }
}

type SocketWithMessage = Duplex & { _httpMessage?: http.ServerResponse | null };

/** Installs the JSON answers for parser errors, read timeouts and unmet `Expect` headers. */
export function installJsonClientErrors(server: http.Server): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or an already started response: nothing can be said any more.
    const started = (socket as SocketWithMessage)._httpMessage?.headersSent === true;
    if (err.code === "ECONNRESET" || !socket.writable || started) {
      socket.destroy();
      return;
    }
    const { status, message } = clientErrorResponse(err);
    socket.end(rawJsonError(status, message));
  });
  server.on("checkExpectation", (_req: http.IncomingMessage, res: http.ServerResponse) => {
    const body = JSON.stringify({ error: "Expectation failed: only 100-continue is supported" });
    res.writeHead(417, {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Length": Buffer.byteLength(body),
      "X-Content-Type-Options": "nosniff",
      Connection: "close",
    });
    res.end(body);
  });
}
