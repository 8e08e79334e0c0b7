import { describe, expect, it } from "vitest";
import { chooseLogFormat, formatBanner, prettyLogFormatter, SERVICES } from "../src/index.ts";

describe("npm start banner", () => {
  it("lists the API and every service's ops port (/metrics)", () => {
    const services = SERVICES.map((d, i) => ({
      name: d.name,
      url: d.defaultPort ? `http://127.0.0.1:${d.defaultPort}` : "",
      metricsUrl: `http://127.0.0.1:${40_000 + i}`,
    }));
    const banner = formatBanner({
      apiBaseUrl: "http://localhost:8080/api/v1",
      catalogUrl: "http://127.0.0.1:8090/providers/models",
      services,
    });
    expect(banner).toContain("API:            http://localhost:8080/api/v1");
    expect(banner).toContain("Model catalog:  http://localhost:8090/providers/models");
    for (const [i, s] of services.entries()) {
      const line = banner.split("\n").find((l) => l.trim().startsWith(`${s.name} `));
      expect(line, s.name).toContain(`http://localhost:${40_000 + i}/metrics`);
    }
    expect(banner.split("\n").find((l) => l.trim().startsWith("worker "))).not.toContain("service");
  });

  it("says so when a service never reported its ops port", () => {
    const banner = formatBanner({
      apiBaseUrl: "http://localhost:8080/api/v1",
      services: [{ name: "worker", url: "", metricsUrl: undefined }],
    });
    expect(banner).toContain("worker   (no ops port reported)");
  });
});

describe("npm start log format", () => {
  it("is pretty on a terminal and JSON otherwise, unless set", () => {
    expect(chooseLogFormat("auto", true)).toBe("pretty");
    expect(chooseLogFormat("auto", false)).toBe("json");
    expect(chooseLogFormat("auto", undefined)).toBe("json");
    expect(chooseLogFormat("json", true)).toBe("json");
    expect(chooseLogFormat("pretty", false)).toBe("pretty");
  });

  it("turns a pino record into one readable line", () => {
    const line = prettyLogFormatter()({
      level: "warn",
      time: "2026-01-02T03:04:05.678Z",
      service: "gateway",
      name: "gateway",
      pid: 1,
      msg: "redis error",
      url: "redis://127.0.0.1:6379",
    });
    expect(line).toMatch(/WARN.*redis error/);
    expect(line).toContain('"url":"redis://127.0.0.1:6379"');
    expect(line).not.toContain('"level"');
    expect(line).not.toContain("pid");
    expect(line.trimEnd().split("\n")).toHaveLength(1);
  });
});
