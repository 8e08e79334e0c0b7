import { describe, expect, it } from "vitest";
import { toEventRows } from "../../src/events/index.ts";

const encode = (value: unknown) => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
const WF = "8C2B1F4E-1D2A-4B3C-9D8E-7F6A5B4C3D2E";
const base = { workflow_id: WF, type: "PROGRESS", agent_id: "a", timestamp: "2026-01-01T12:00:00+02:00", seq: 7 };

describe("toEventRows", () => {
  it("keeps the text as sent and fills the columns from it", () => {
    const text = ` { "seq": 7, "workflow_id": "${WF}", "type": "PROGRESS", "agent_id": "a", "timestamp": "2026-01-01T12:00:00+02:00" } `;
    const r = toEventRows(encode(text));
    expect(r).toEqual({
      ok: true,
      rows: [
        {
          taskId: WF.toLowerCase(),
          seq: 7,
          type: "PROGRESS",
          agentId: "a",
          timestamp: "2026-01-01T10:00:00.000Z",
          json: text,
        },
      ],
    });
  });

  it("counts characters as PostgreSQL does (code points)", () => {
    expect(toEventRows(encode({ ...base, agent_id: "🌍".repeat(128) })).ok).toBe(true);
    expect(toEventRows(encode({ ...base, agent_id: "🌍".repeat(129) })).ok).toBe(false);
  });

  it("refuses what cannot fit the columns, saying why", () => {
    const reasonOf = (data: Uint8Array) => {
      const r = toEventRows(data);
      return r.ok ? "ok" : r.reason;
    };
    expect(reasonOf(new Uint8Array([0xef, 0xbb, 0xbf, ...encode(base)]))).toBe("data is not JSON");
    expect(reasonOf(new Uint8Array([0xc3, 0x28]))).toBe("data is not UTF-8");
    expect(reasonOf(encode("null"))).toBe("data is not a JSON object");
    expect(reasonOf(encode({ ...base, workflow_id: "wf-1" }))).toMatch(/workflow_id/);
    expect(reasonOf(encode({ ...base, seq: 2 ** 31 }))).toMatch(/seq/);
    expect(reasonOf(encode({ ...base, seq: 1.5 }))).toMatch(/seq/);
    expect(reasonOf(encode({ ...base, type: "" }))).toMatch(/type/);
    expect(reasonOf(encode({ ...base, timestamp: "+275760-09-13T00:00:00.000Z" }))).toMatch(/timestamp/);
    expect(reasonOf(encode({ ...base, timestamp: 1_767_225_600_000 }))).toMatch(/timestamp/);
  });

  it("makes one row per event of a message, and refuses the message for one bad event", () => {
    const texts = [7, 8, 9].map((seq) => JSON.stringify({ ...base, seq }));
    const r = toEventRows(encode(texts.join("\n")));
    expect(r.ok && r.rows.map((row) => [row.seq, row.json])).toEqual([
      [7, texts[0]],
      [8, texts[1]],
      [9, texts[2]],
    ]);
    const bad = [texts[0], JSON.stringify({ ...base, seq: 0 }), texts[2]].join("\n");
    expect(toEventRows(encode(bad))).toEqual({
      ok: false,
      reason: "event 2: seq is missing or not a positive 32-bit integer",
    });
  });
});
