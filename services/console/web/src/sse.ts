// An incremental parser of the text/event-stream format (the HTML standard's rules): fields
// `id`, `event`, `data` (joined by newlines), `retry`; comments (`:`) ignored; a blank line
// dispatches. Fed with decoded text in any chunking.

export interface SseMessage {
  /** The last `id:` seen in the stream so far (what a reconnect sends as Last-Event-ID). */
  lastEventId: string;
  event: string;
  /** Undefined for a frame with no data line (e.g. an `id:` alone, which only moves the cursor). */
  data: string | undefined;
}

export class SseParser {
  lastEventId = "";
  /** The server's `retry:` in milliseconds, once it sent one. */
  retryMs: number | undefined;
  #buffer = "";
  #event = "";
  #data: string[] | undefined;
  #touched = false;

  /** Feeds text; returns the frames completed by it. */
  push(text: string): SseMessage[] {
    this.#buffer += text;
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.#buffer);
      if (!m) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (m[0] === "\r" && m.index === this.#buffer.length - 1) break;
      const line = this.#buffer.slice(0, m.index);
      this.#buffer = this.#buffer.slice(m.index + m[0].length);
      const frame = this.#line(line);
      if (frame) out.push(frame);
    }
    return out;
  }

  #line(line: string): SseMessage | undefined {
    if (line === "") {
      if (!this.#touched) return undefined;
      const frame: SseMessage = { lastEventId: this.lastEventId, event: this.#event || "message", data: this.#data?.join("\n") };
      this.#event = "";
      this.#data = undefined;
      this.#touched = false;
      return frame;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    switch (field) {
      case "id":
        if (!value.includes("\0")) this.lastEventId = value;
        this.#touched = true;
        break;
      case "event":
        this.#event = value;
        this.#touched = true;
        break;
      case "data":
        (this.#data ??= []).push(value);
        this.#touched = true;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
    }
    return undefined;
  }
}
