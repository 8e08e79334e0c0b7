import pretty, { prettyFactory, type PrettyStream } from "pino-pretty";

// `npm start` on a terminal shows readable log lines; piped or in CI it keeps JSON (one object a
// line, for log collectors). The services always log JSON; only the echo is reformatted.

export type LogFormat = "pretty" | "json";

/** "auto" → pretty on a TTY, JSON otherwise. */
export function chooseLogFormat(setting: "auto" | LogFormat, isTty: boolean | undefined): LogFormat {
  if (setting !== "auto") return setting;
  return isTty ? "pretty" : "json";
}

/** Formats one pino record (already parsed) as pino-pretty would print it. */
export function prettyLogFormatter(options: { colorize?: boolean } = {}): (record: Record<string, unknown>) => string {
  return prettyFactory(prettyOptions(options.colorize));
}

/** A pino destination printing readable lines to stdout (the `npm start` process's own logger). */
export function prettyLogStream(options: { colorize?: boolean } = {}): PrettyStream {
  return pretty({ ...prettyOptions(options.colorize), sync: true });
}

// service/name are shown as the `[name]` prefix already; pid/hostname are noise locally.
const prettyOptions = (colorize = false) => ({
  colorize,
  translateTime: "SYS:HH:MM:ss.l",
  ignore: "pid,hostname,service,name",
  singleLine: true,
});
