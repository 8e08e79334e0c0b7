import { createParser, type EventSourceMessage } from "eventsource-parser";
import { ProviderError, isRetryableStatus } from "./errors.ts";
import { abortReason } from "./provider.ts";

export type FetchLike = typeof fetch;

export interface SseRequest {
  fetch: FetchLike;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** The caller's cancellation. */
  signal: AbortSignal | undefined;
  provider: string;
  model: string;
  /** A stream silent for this long (no headers, no bytes) is abandoned as a retryable failure. */
  idleTimeoutMs: number;
}

/** Returned by an event handler to stop reading (e.g. after OpenAI's `[DONE]`). */
export const STOP = Symbol("stop");

/**
 * POSTs a JSON body and feeds the Server-Sent Events of the response to `onEvent`, in order.
 * Aborting `signal` aborts the fetch and its body stream, which closes the connection at once.
 * Every failure becomes a ProviderError that says whether repeating the call may help; an
 * abort by the caller rejects with the signal's reason instead, so it is never retried.
 */
export async function postSse(
  req: SseRequest,
  onEvent: (event: EventSourceMessage) => typeof STOP | void,
): Promise<void> {
  const idle = new AbortController();
  const timer = setTimeout(() => idle.abort(), req.idleTimeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, idle.signal]) : idle.signal;
  const fail = (
    message: string,
    retryable: boolean,
    extra: { status?: number; retryAfterMs?: number | undefined; cause?: unknown } = {},
  ) =>
    new ProviderError(`${req.provider} ${req.model}: ${message}`, {
      provider: req.provider,
      model: req.model,
      retryable,
      ...extra,
    });

  try {
    let response: Response;
    try {
      response = await req.fetch(req.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream", ...req.headers },
        body: JSON.stringify(req.body),
        signal,
      });
    } catch (err) {
      throw translate(err);
    }
    timer.refresh();

    if (!response.ok) {
      const text = await response.text().catch(() => "");
      throw fail(`HTTP ${response.status}: ${errorMessage(text)}`, isRetryableStatus(response.status), {
        status: response.status,
        retryAfterMs: retryAfterMs(response.headers),
      });
    }
    if (!response.body) throw fail("empty response body", true);

    let stopped = false;
    let failure: unknown;
    const parser = createParser({
      onEvent: (event) => {
        if (stopped || failure !== undefined) return;
        try {
          if (onEvent(event) === STOP) stopped = true;
        } catch (err) {
          failure = err;
        }
      },
    });
    try {
      // Leaving this loop early (STOP or a failure) cancels the body stream and frees the socket.
      for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
        timer.refresh();
        parser.feed(chunk);
        if (failure !== undefined) throw failure;
        if (stopped) return;
      }
    } catch (err) {
      if (err === failure) throw err;
      throw translate(err);
    }
    parser.reset({ consume: true });
    if (failure !== undefined) throw failure;
  } finally {
    clearTimeout(timer);
  }

  function translate(err: unknown): unknown {
    if (err instanceof ProviderError) return err;
    if (req.signal?.aborted) return abortReason(req.signal);
    if (idle.signal.aborted) return fail(`no data for ${req.idleTimeoutMs} ms`, true, { cause: err });
    const code = (err as { cause?: { code?: string } }).cause?.code;
    return fail(`network error: ${code ?? (err as Error).message}`, true, { cause: err });
  }
}

/** The provider's error message from an error body (OpenAI and Anthropic both use `error.message`). */
export function errorMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === "string") return parsed.error;
    if (typeof parsed.error?.message === "string") return parsed.error.message;
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  const text = body.trim().slice(0, 300);
  return text === "" ? "(no body)" : text;
}

function retryAfterMs(headers: Headers): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Parses one event's JSON data; a malformed frame is a (retryable) provider failure. */
export function parseJson<T>(data: string, provider: string, model: string): T {
  try {
    return JSON.parse(data) as T;
  } catch (err) {
    throw new ProviderError(`${provider} ${model}: malformed stream frame: ${data.slice(0, 100)}`, {
      provider,
      model,
      retryable: true,
      cause: err,
    });
  }
}
