import type { TimelineRow } from "../timeline-rows.ts";
import { time } from "../format.ts";

export function Timeline({ rows }: { rows: TimelineRow[] }) {
  if (rows.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <ol class="timeline" data-testid="timeline">
      {rows.map((row) =>
        row.kind === "stream" ? (
          <li class="tone-llm" key={`s${row.firstSeq}`} data-testid="timeline-stream" data-seq={row.firstSeq}>
            <div class="row-head">
              <span class="label">Streaming output</span>
              <span class="agent">{row.agentId}</span>
              <time>{time(row.timestamp)}</time>
            </div>
            <pre class="streamed">{row.text}</pre>
          </li>
        ) : (
          <li
            class={`tone-${row.line.tone}`}
            key={`e${row.event.seq}`}
            data-testid="timeline-event"
            data-type={row.event.type}
            data-seq={row.event.seq}
          >
            <div class="row-head">
              <span class="label">{row.line.label}</span>
              <span class="agent">{row.event.agent_id}</span>
              <time>{time(row.event.timestamp)}</time>
            </div>
            {row.line.summary && <div class="summary">{row.line.summary}</div>}
            {row.line.facts.length > 0 && (
              <div class="facts">
                {row.line.facts.map((f) => (
                  <span class="fact">{f}</span>
                ))}
              </div>
            )}
          </li>
        ),
      )}
    </ol>
  );
}
