import { describe, expect, it } from "vitest";
import { formatTraceparent, parseTraceparent } from "../src/index.ts";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("traceparent", () => {
  it("parses a valid header and formats it back", () => {
    const tp = parseTraceparent(` ${VALID} `);
    expect(tp).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentId: "00f067aa0ba902b7", flags: "01" });
    expect(formatTraceparent(tp!)).toBe(VALID);
  });

  it("ignores anything that breaks the format (a new trace starts instead)", () => {
    for (const header of [
      undefined,
      null,
      "",
      VALID.toUpperCase(),
      VALID.replace(/^00/, "01"),
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      `${VALID}-extra`,
    ]) {
      expect(parseTraceparent(header), String(header)).toBeUndefined();
    }
  });
});
