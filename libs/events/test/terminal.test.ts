import { describe, expect, it } from "vitest";
import { isTerminalStatus, TERMINAL_STATUSES } from "../src/index.ts";

describe("isTerminalStatus", () => {
  it("is true for the four statuses a task never leaves", () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual(["CANCELLED", "COMPLETED", "FAILED", "TIMEOUT"]);
    for (const s of TERMINAL_STATUSES) expect(isTerminalStatus(s)).toBe(true);
  });

  it("is false for the others and for the response form", () => {
    for (const s of ["QUEUED", "RUNNING", "TASK_STATUS_COMPLETED", "completed", ""])
      expect(isTerminalStatus(s), s).toBe(false);
  });
});
