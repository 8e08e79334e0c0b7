// test-tier: e2e
// The rollout and rate-limit scenarios of `npm run chaos`, small (issue 14; docs/reliability.md):
// two instances of every service replaced one at a time under load with stream subscribers, and
// one key's rate limit across two gateways.
import { ownServersAvailable } from "@tog/tests-e2e";
import { describe, expect, it } from "vitest";
import { expectNothingLost, runSmall, SMALL } from "./expect-row.ts";

describe.skipIf(!ownServersAvailable())("chaos scenarios: rollout and limits", () => {
  it("rolling-restart: every instance SIGTERMed in turn; no request fails, streams resume without a gap", async () => {
    const row = await runSmall("rolling-restart");
    expectNothingLost(row);
    const s = row.streams!;
    expect(s.subscriptions).toBeGreaterThanOrEqual(SMALL.rollingSubscribers);
    // At-least-once allows an event twice around a resume, never one the client said it had.
    expect({
      gaps: s.gaps,
      beforeResumePoint: s.duplicatesBeforeResumePoint,
      gaveUp: s.gaveUp,
      incomplete: s.incomplete,
    }).toEqual({ gaps: 0, beforeResumePoint: 0, gaveUp: 0, incomplete: 0 });
  }, 300_000);

  it("rate-limits-2-gateways: one key's allowed requests across two gateways within 5 % of its limit", async () => {
    const row = await runSmall("rate-limits-2-gateways");
    expectNothingLost(row);
    const f = row.figures!;
    expect(Math.abs(f.allowed! - f.limit!)).toBeLessThanOrEqual(f.limit! * 0.05);
    expect(f.other).toBe(0);
  }, 300_000);
});
