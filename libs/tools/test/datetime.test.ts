import { describe, expect, it } from "vitest";
import { fails, ok } from "./helpers.ts";

// 2024-03-30 11:00 UTC: the day before Europe/Berlin switches to summer time (31 March, 02:00 → 03:00).
const now = () => new Date("2024-03-30T11:00:00Z");
const dt = (args: Record<string, unknown>) => ok("datetime", args, { now });

describe("datetime", () => {
  it("now uses the injected clock and the requested zone", async () => {
    expect(await dt({ operation: "now" })).toEqual({
      iso: "2024-03-30T11:00:00Z",
      timezone: "UTC",
      utc_offset: "+00:00",
      epoch_ms: Date.parse("2024-03-30T11:00:00Z"),
      weekday: "Saturday",
    });
    expect(await dt({ operation: "now", timezone: "Europe/Berlin" })).toMatchObject({
      iso: "2024-03-30T12:00:00+01:00",
      timezone: "Europe/Berlin",
      utc_offset: "+01:00",
    });
    expect(await dt({ operation: "now", timezone: "Asia/Kolkata" })).toMatchObject({
      iso: "2024-03-30T16:30:00+05:30",
    });
  });

  it("adding a day across the spring-forward keeps the wall clock; adding 24 hours does not", async () => {
    const base = { operation: "add", date: "2024-03-30T12:00", timezone: "Europe/Berlin" };
    expect(await dt({ ...base, duration: "P1D" })).toMatchObject({
      iso: "2024-03-31T12:00:00+02:00",
      start: "2024-03-30T12:00:00+01:00",
      duration: "P1D",
    });
    expect(await dt({ ...base, duration: "PT24H" })).toMatchObject({ iso: "2024-03-31T13:00:00+02:00" });
  });

  it("adds the autumn fall-back hour exactly", async () => {
    // 27 Oct 2024 03:00 CEST → 02:00 CET in Berlin: 01:30 + 2h lands at 02:30 in winter time.
    expect(
      await dt({ operation: "add", date: "2024-10-27T01:30", timezone: "Europe/Berlin", duration: "PT2H" }),
    ).toMatchObject({ iso: "2024-10-27T02:30:00+01:00", utc_offset: "+01:00" });
  });

  it("adds duration objects, negative values and month ends", async () => {
    expect(await dt({ operation: "add", date: "now", duration: { days: -3, hours: 4 } })).toMatchObject({
      iso: "2024-03-27T15:00:00Z",
    });
    expect(await dt({ operation: "add", date: "2024-01-31", duration: { months: 1 } })).toMatchObject({
      iso: "2024-02-29T00:00:00Z",
    });
    expect(await dt({ operation: "add", date: "2024-03-30T23:30:00-04:00", duration: "PT1H" })).toMatchObject({
      iso: "2024-03-31T04:30:00Z", // an explicit offset is honoured, the result shown in the requested zone
    });
  });

  it("diff counts a 23-hour day over the DST change", async () => {
    const diff = await dt({
      operation: "diff",
      from: "2024-03-31T00:00",
      to: "2024-04-01T00:00",
      timezone: "Europe/Berlin",
      units: ["hours"],
    });
    expect(diff).toEqual({
      from: "2024-03-31T00:00:00+01:00",
      to: "2024-04-01T00:00:00+02:00",
      difference: { hours: 23 },
      milliseconds: 23 * 3_600_000,
    });
    const days = await dt({
      operation: "diff",
      from: "2024-03-31T00:00",
      to: "2024-04-01T00:00",
      timezone: "Europe/Berlin",
      units: ["days"],
    });
    expect(days.difference).toEqual({ days: 1 });
  });

  it("diff defaults to days..seconds and accepts now", async () => {
    const diff = await dt({ operation: "diff", from: "2024-01-01", to: "now" });
    expect(diff.difference).toEqual({ days: 89, hours: 11, minutes: 0, seconds: 0 });
    const negative = await dt({ operation: "diff", from: "now", to: "2024-03-29T11:00:00Z", units: ["days"] });
    expect(negative.difference).toEqual({ days: -1 });
  });

  it("formats in a locale and zone, or with a pattern", async () => {
    const full = await dt({
      operation: "format",
      date: "2024-03-30T12:00:00Z",
      timezone: "Europe/Berlin",
      locale: "de-DE",
      style: "full",
    });
    expect(full.formatted).toContain("Samstag, 30. März 2024");
    expect(full.formatted).toContain("13:00:00");
    expect(full.iso).toBe("2024-03-30T13:00:00+01:00");
    const pattern = await dt({
      operation: "format",
      date: "2024-03-30T12:00:00Z",
      timezone: "Asia/Tokyo",
      pattern: "yyyy-MM-dd HH:mm",
    });
    expect(pattern.formatted).toBe("2024-03-30 21:00");
    const short = await dt({ operation: "format", date: "now", locale: "en-GB", style: "short" });
    expect(short.formatted).toBe("30/03/2024, 11:00");
  });

  it("parses ISO, RFC 2822, HTTP, SQL and patterned text", async () => {
    expect(await dt({ operation: "parse", text: "Sat, 30 Mar 2024 12:00:00 GMT" })).toMatchObject({
      iso: "2024-03-30T12:00:00Z",
    });
    expect(await dt({ operation: "parse", text: "2024-03-30 12:00:00", timezone: "America/New_York" })).toMatchObject({
      iso: "2024-03-30T12:00:00-04:00",
    });
    expect(
      await dt({
        operation: "parse",
        text: "30.03.2024 14:15",
        pattern: "dd.MM.yyyy HH:mm",
        timezone: "Europe/Berlin",
      }),
    ).toMatchObject({ iso: "2024-03-30T14:15:00+01:00", epoch_ms: Date.parse("2024-03-30T13:15:00Z") });
  });

  it("explains bad input", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ operation: "now", timezone: "Mars/Olympus" }, "timezone: Unknown time zone"],
      [{ operation: "add", date: "garbage", duration: "P1D" }, 'date: "garbage" is not an ISO 8601 date-time'],
      [{ operation: "add", date: "now", duration: "1 day" }, 'duration: "1 day" is not an ISO 8601 duration'],
      [{ operation: "add", date: "now" }, 'duration: Required for operation "add"'],
      [{ operation: "diff", from: "now" }, 'to: Required for operation "diff"'],
      [{ operation: "format", date: "now", locale: "not a locale!" }, "locale: Unknown locale"],
      [{ operation: "parse", text: "yesterday" }, "is not a recognized date"],
      [{ operation: "parse", text: "31/02/2024", pattern: "dd/MM/yyyy" }, 'does not match pattern "dd/MM/yyyy"'],
      [{ operation: "teleport" }, "operation: Invalid option"],
    ];
    for (const [args, message] of cases) {
      const failure = await fails("datetime", args, { now });
      expect(failure.errorType, JSON.stringify(args)).toBe("INVALID_INPUT");
      expect(failure.error.message, JSON.stringify(args)).toContain(message);
    }
  });

  it("without an injected clock uses the real time", async () => {
    const before = Date.now();
    const data = await ok("datetime", { operation: "now" });
    expect(data.epoch_ms).toBeGreaterThanOrEqual(before - 1);
    expect(data.epoch_ms).toBeLessThanOrEqual(Date.now() + 1);
  });
});
