import type { TogEvent } from "@tog/sdk";

// What a person sees while following a task: one line per agent started/finished, tool call and
// result, approval, error; the model's output streamed as it is written; and a progress line at
// the bottom (status, step, elapsed, events, tokens, cost) redrawn in place on a terminal.

export interface LiveViewOptions {
  write: (text: string) => void;
  /** A terminal: redraw the progress line in place, use colour (unless NO_COLOR). */
  tty: boolean;
  color: boolean;
  now?: () => number;
}

const ESC = "\u001b[";

export class LiveView {
  readonly #o: LiveViewOptions;
  readonly #started: number;
  #events = 0;
  #tokens = 0;
  #cost = 0;
  #percent: number | undefined;
  #step = "";
  #status = "connecting";
  /** The cursor is in the middle of streamed model text. */
  #inText = false;
  #statusShown = false;
  #reconnects = 0;

  constructor(options: LiveViewOptions) {
    this.#o = options;
    this.#started = (options.now ?? Date.now)();
  }

  #c(code: number, text: string): string {
    return this.#o.color ? `${ESC}${code}m${text}${ESC}0m` : text;
  }

  #clearStatus(): void {
    if (this.#statusShown) {
      this.#o.write(`\r${ESC}2K`);
      this.#statusShown = false;
    }
  }

  #endText(): void {
    if (this.#inText) {
      this.#o.write("\n");
      this.#inText = false;
    }
  }

  /** Prints one line above the progress line. */
  line(text: string): void {
    this.#clearStatus();
    this.#endText();
    this.#o.write(`${text}\n`);
    this.drawStatus();
  }

  /** The progress line, e.g. `⟳ RUNNING · step 2/3 · 40% · 3.1s · 17 events · 412 tokens · $0.0008`. */
  statusText(): string {
    const secs = (((this.#o.now ?? Date.now)() - this.#started) / 1000).toFixed(1);
    const parts = [this.#status];
    if (this.#step) parts.push(this.#step);
    if (this.#percent !== undefined) parts.push(`${Math.round(this.#percent)}%`);
    parts.push(`${secs}s`, `${this.#events} events`, `${this.#tokens} tokens`, `$${this.#cost.toFixed(4)}`);
    if (this.#reconnects > 0) parts.push(`${this.#reconnects} reconnect${this.#reconnects === 1 ? "" : "s"}`);
    return `⟳ ${parts.join(" · ")}`;
  }

  drawStatus(): void {
    if (!this.#o.tty || this.#inText) return;
    this.#o.write(`\r${ESC}2K${this.#c(2, this.statusText())}`);
    this.#statusShown = true;
  }

  reconnecting(reason: string): void {
    this.#reconnects++;
    this.line(this.#c(33, `↻ connection lost (${reason}); resuming…`));
  }

  /** Leaves the terminal clean (no progress line) before printing the result or a prompt. */
  finish(): void {
    this.#clearStatus();
    this.#endText();
  }

  event(e: TogEvent): void {
    this.#events++;
    switch (e.type) {
      case "WORKFLOW_STARTED":
        this.#status = "RUNNING";
        this.line(`${this.#c(1, `▶ started (${e.data.mode})`)} ${e.workflow_id}`);
        return;
      case "AGENT_STARTED":
        this.line(this.#c(36, `● agent ${e.agent_id} started`) + (e.data.subtask ? `: ${e.data.subtask}` : ""));
        return;
      case "AGENT_COMPLETED":
        this.line(
          `${this.#c(36, `✓ agent ${e.agent_id} finished`)} (${e.data.tokens_used} tokens, ${e.data.duration_ms} ms)`,
        );
        return;
      case "AGENT_FAILED":
        this.line(this.#c(31, `✗ agent ${e.agent_id} failed: ${e.data.error_message}`));
        return;
      case "TOOL_INVOKED":
        this.line(`${this.#c(35, `⚙ tool ${e.data.tool_name}`)} ${JSON.stringify(e.data.tool_args)}`);
        return;
      case "TOOL_OBSERVATION": {
        const result = typeof e.data.result === "string" ? e.data.result : JSON.stringify(e.data.result);
        this.line(
          `${this.#c(35, `  ↳ ${e.data.tool_name}:`)} ${result.length > 200 ? `${result.slice(0, 200)}…` : result}`,
        );
        return;
      }
      case "LLM_PARTIAL":
        this.#clearStatus();
        if (!this.#inText) {
          this.#o.write(this.#c(2, "  │ "));
          this.#inText = true;
        }
        this.#o.write(e.data.chunk.replace(/\n/g, `\n${this.#c(2, "  │ ")}`));
        return;
      case "LLM_OUTPUT":
        this.#tokens += e.data.tokens_used;
        this.#cost += e.data.cost_usd;
        this.line(this.#c(2, `  ✎ ${e.data.model}: ${e.data.tokens_used} tokens, $${e.data.cost_usd.toFixed(6)}`));
        return;
      case "PROGRESS":
        this.#percent = e.data.percentage;
        this.#step = `step ${e.data.current_step}/${e.data.total_steps}`;
        this.drawStatus();
        return;
      case "APPROVAL_REQUESTED":
        this.#status = "WAITING FOR APPROVAL";
        this.line(
          this.#c(33, `⏸ approval requested: ${e.data.tool_name} (${e.data.risk_level})`) +
            `\n  tog approve ${e.workflow_id} ${e.data.approval_id} --approve   (or --deny)`,
        );
        return;
      case "APPROVAL_DECISION":
        this.#status = "RUNNING";
        this.line(
          this.#c(33, `⏵ approval ${e.data.decision}`) + (e.data.approved_by ? ` by ${e.data.approved_by}` : ""),
        );
        return;
      case "ERROR_OCCURRED":
        this.line(this.#c(31, `✗ ${e.data.error_type}: ${e.data.error_message}`));
        if (e.data.terminal) this.#status = e.data.status ?? "FAILED";
        return;
      case "WORKFLOW_COMPLETED":
        this.#tokens = e.data.total_tokens;
        this.#cost = e.data.total_cost_usd;
        this.#status = "COMPLETED";
        this.line(
          this.#c(32, `■ completed`) +
            ` in ${(e.data.duration_ms / 1000).toFixed(1)}s · ${e.data.total_tokens} tokens · $${e.data.total_cost_usd.toFixed(6)}`,
        );
        return;
      default:
        this.drawStatus();
    }
  }
}
