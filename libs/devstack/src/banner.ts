// The lines `npm start` prints once every service is ready: where the API is, and each
// service's internal ops port (GET /metrics, GET /health) - docs/operations.md.

export interface BannerService {
  name: string;
  /** Its own port, if it has one (workers have none). */
  url: string;
  /** `http://127.0.0.1:<ops port>`; undefined when the service never reported one. */
  metricsUrl: string | undefined;
}

export interface BannerOptions {
  apiBaseUrl: string;
  catalogUrl?: string | undefined;
  /** The web console's page, when the console runs. */
  consoleUrl?: string | undefined;
  services: BannerService[];
}

const local = (url: string) => url.replace("127.0.0.1", "localhost");

export function formatBanner(options: BannerOptions): string {
  const width = Math.max(...options.services.map((s) => s.name.length), 7);
  const lines = [
    "",
    `  API:            ${options.apiBaseUrl}`,
    `  OpenAPI:        ${options.apiBaseUrl}/openapi.json`,
    ...(options.consoleUrl ? [`  Web console:    ${options.consoleUrl}`] : []),
    ...(options.catalogUrl ? [`  Model catalog:  ${local(options.catalogUrl)}`] : []),
    "  Ops ports (GET /metrics, GET /health; internal):",
    ...options.services.map(
      (s) =>
        `    ${s.name.padEnd(width)}  ${s.metricsUrl ? `${local(s.metricsUrl)}/metrics` : "(no ops port reported)"}` +
        (s.url ? `   service ${local(s.url)}` : ""),
    ),
    "  Ctrl-C stops everything.",
    "",
  ];
  return `${lines.join("\n")}\n`;
}
