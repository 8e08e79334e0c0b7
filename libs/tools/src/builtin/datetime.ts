import { DateTime, Duration, IANAZone, type DurationLikeObject, type DurationUnit } from "luxon";
import { z } from "zod";
import { ValidationError } from "@tog/core";
import { defineTool, type ToolContext, type ToolResult } from "../tool.ts";

// Node 24 has no Temporal yet (globalThis.Temporal is undefined without a flag), so calendar
// arithmetic with IANA zones and DST comes from luxon, which formats through Intl.
// Every "now" comes from the injected clock, so a test or a replayed step sees the same instant.

const UNITS = ["years", "quarters", "months", "weeks", "days", "hours", "minutes", "seconds", "milliseconds"] as const;
const STYLES = ["full", "long", "medium", "short"] as const;

const timezone = z
  .string()
  .max(64)
  .refine((tz) => tz === "UTC" || IANAZone.isValidZone(tz), {
    message: 'Unknown time zone: use an IANA name such as "Europe/Berlin" or "UTC"',
  });
const locale = z
  .string()
  .max(35)
  .refine(isValidLocale, { message: 'Unknown locale: use a BCP 47 tag such as "en-US" or "de-DE"' });
const dateText = z.string().min(1).max(100);

const durationObject = z
  .object(
    Object.fromEntries(UNITS.map((unit) => [unit, z.number().finite().optional()])) as Record<
      (typeof UNITS)[number],
      z.ZodOptional<z.ZodNumber>
    >,
  )
  .strict();

const parameters = z
  .object({
    operation: z
      .enum(["now", "add", "diff", "format", "parse"])
      .describe(
        "now: current time; add: date + duration; diff: to - from in units; format: render a date; parse: read a date from text",
      ),
    timezone: timezone
      .default("UTC")
      .describe("IANA time zone; dates without an offset are read in it and results are shown in it (default UTC)"),
    date: dateText.optional().describe('add, format: ISO 8601 date-time, or "now"'),
    duration: z
      .union([z.string().min(2).max(64), durationObject])
      .optional()
      .describe(
        'add: ISO 8601 duration ("P1DT2H") or an object like {"days": -3, "hours": 4}; negative values subtract',
      ),
    from: dateText.optional().describe('diff: start, ISO 8601 or "now"'),
    to: dateText.optional().describe('diff: end, ISO 8601 or "now"'),
    units: z
      .array(z.enum(UNITS))
      .min(1)
      .max(UNITS.length)
      .optional()
      .describe("diff: units of the result (default days, hours, minutes, seconds)"),
    locale: locale.default("en-US").describe("format, parse: BCP 47 locale (default en-US)"),
    style: z
      .enum(STYLES)
      .default("long")
      .describe("format: date and time style when no pattern is given (default long)"),
    pattern: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe(
        'format, parse: Luxon token pattern such as "yyyy-MM-dd HH:mm" (parse without it reads ISO 8601, RFC 2822, HTTP and SQL forms)',
      ),
    text: z.string().min(1).max(200).optional().describe("parse: the text to read"),
  })
  .strict()
  .superRefine((args, ctx) => {
    const need = (field: keyof typeof args) => {
      if (args[field] === undefined)
        ctx.addIssue({ code: "custom", path: [field], message: `Required for operation "${args.operation}"` });
    };
    if (args.operation === "add") need("date"), need("duration");
    if (args.operation === "diff") need("from"), need("to");
    if (args.operation === "format") need("date");
    if (args.operation === "parse") need("text");
  });

type Args = z.output<typeof parameters>;

function isValidLocale(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

function describe(dt: DateTime) {
  return {
    iso: dt.toISO({ suppressMilliseconds: true }) ?? "",
    timezone: dt.zoneName ?? "UTC",
    utc_offset: dt.toFormat("ZZ"),
    epoch_ms: dt.toMillis(),
    weekday: dt.setLocale("en-US").toFormat("cccc"),
  };
}

function readDate(text: string, field: string, args: Args, context: ToolContext): DateTime {
  if (text.trim().toLowerCase() === "now")
    return DateTime.fromJSDate(context.now?.() ?? new Date(), { zone: args.timezone });
  const dt = DateTime.fromISO(text.trim(), { zone: args.timezone });
  if (!dt.isValid) {
    throw new ValidationError(
      `${field}: "${text}" is not an ISO 8601 date-time (${dt.invalidExplanation ?? dt.invalidReason})`,
    );
  }
  return dt;
}

function readDuration(value: NonNullable<Args["duration"]>): Duration {
  const duration =
    typeof value === "string" ? Duration.fromISO(value.trim()) : Duration.fromObject(value as DurationLikeObject);
  if (!duration.isValid) {
    const shown = typeof value === "string" ? `"${value}"` : JSON.stringify(value);
    throw new ValidationError(`duration: ${shown} is not an ISO 8601 duration such as "P1DT2H30M"`);
  }
  return duration;
}

function parseText(args: Args): DateTime {
  const text = (args.text ?? "").trim();
  const options = { zone: args.timezone, locale: args.locale };
  if (args.pattern !== undefined) {
    const dt = DateTime.fromFormat(text, args.pattern, options);
    if (!dt.isValid) {
      throw new ValidationError(
        `text: "${text}" does not match pattern "${args.pattern}" (${dt.invalidExplanation ?? dt.invalidReason})`,
      );
    }
    return dt;
  }
  for (const read of [DateTime.fromISO, DateTime.fromRFC2822, DateTime.fromHTTP, DateTime.fromSQL]) {
    const dt = read(text, options);
    if (dt.isValid) return dt;
  }
  throw new ValidationError(
    `text: "${text}" is not a recognized date (ISO 8601, RFC 2822, HTTP or SQL); give a pattern`,
  );
}

function run(args: Args, context: ToolContext): ToolResult {
  switch (args.operation) {
    case "now": {
      const now = readDate("now", "now", args, context);
      const data = describe(now);
      return { data, text: data.iso };
    }
    case "add": {
      const start = readDate(args.date ?? "", "date", args, context);
      const duration = readDuration(args.duration ?? "");
      // Calendar units (days, months) keep the wall-clock time across DST; hours/minutes are exact.
      const result = start.plus(duration);
      if (!result.isValid) throw new ValidationError(`The result is out of range (${result.invalidExplanation ?? ""})`);
      const data = { ...describe(result), start: describe(start).iso, duration: duration.toISO() ?? "" };
      return { data, text: data.iso };
    }
    case "diff": {
      const from = readDate(args.from ?? "", "from", args, context);
      const to = readDate(args.to ?? "", "to", args, context);
      const units: DurationUnit[] = args.units ?? ["days", "hours", "minutes", "seconds"];
      const difference = to.diff(from, units).toObject() as Record<string, number>;
      const data = {
        from: describe(from).iso,
        to: describe(to).iso,
        difference,
        milliseconds: to.toMillis() - from.toMillis(),
      };
      const text = Object.entries(difference)
        .map(([unit, amount]) => `${amount} ${unit}`)
        .join(", ");
      return { data, text };
    }
    case "format": {
      const dt = readDate(args.date ?? "", "date", args, context).setLocale(args.locale);
      const formatted =
        args.pattern !== undefined
          ? dt.toFormat(args.pattern)
          : dt.toLocaleString({ dateStyle: args.style, timeStyle: args.style });
      const data = { formatted, iso: describe(dt).iso, locale: args.locale, timezone: args.timezone };
      return { data, text: formatted };
    }
    case "parse": {
      const data = describe(parseText(args));
      return { data, text: data.iso };
    }
  }
}

export const datetimeTool = defineTool({
  name: "datetime",
  description:
    "Date and time in IANA time zones: current time (now), add a duration to a date (add), the difference between " +
    "two dates in chosen units (diff), locale formatting (format) and reading a date from text (parse). " +
    "Adding days or months keeps the local time across daylight-saving changes; adding hours is exact.",
  parameters,
  riskLevel: "low",
  timeoutSeconds: 5,
  async execute(args, context) {
    return run(args, context);
  },
});
