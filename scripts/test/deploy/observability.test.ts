// deploy/observability: the Prometheus alert rules pass `promtool check rules` and their unit
// tests (`promtool test rules`: each alert fires on the series that should trigger it), every
// PromQL expression of the Grafana dashboard parses, and both use only series README lists.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { findPromtool, gate, REPO_ROOT, run } from "./tools.ts";

const DIR = path.join(REPO_ROOT, "deploy/observability");
const promtool = gate("promtool", findPromtool());

interface Panel {
  title: string;
  targets: { expr: string }[];
}
const dashboard = JSON.parse(readFileSync(path.join(DIR, "grafana-dashboard.json"), "utf8")) as {
  uid: string;
  panels: Panel[];
};
const alerts = readFileSync(path.join(DIR, "alerts.yml"), "utf8");
const readmeSeries = new Set(
  [...readFileSync(path.join(REPO_ROOT, "README.md"), "utf8").matchAll(/`(tog_[a-z_]+)/g)].map((m) => m[1] as string),
);
// Grafana's variables → values Prometheus accepts, so promtool can parse the expressions.
const concrete = (expr: string) => expr.replaceAll("$__rate_interval", "5m").replaceAll("$service", ".*");
const seriesIn = (text: string) =>
  new Set([...text.matchAll(/\b(tog_[a-z_]+)/g)].map((m) => (m[1] as string).replace(/_(bucket|sum|count)$/, "")));

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "tog-observability-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function checkExpressions(exprs: string[]) {
  const file = path.join(tmp, `exprs-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(
    file,
    stringify({
      groups: [{ name: "dashboard", rules: exprs.map((expr, i) => ({ record: `dashboard:expr_${i}`, expr })) }],
    }),
  );
  return run(promtool.require(), ["check", "rules", file]);
}

describe.skipIf(promtool.skip)("Prometheus alert rules (promtool)", () => {
  it("pass promtool check rules", () => {
    const r = run(promtool.require(), ["check", "rules", "alerts.yml"], { cwd: DIR });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("SUCCESS: 5 rules found");
  });

  it("fire on the series that should trigger them (promtool test rules)", () => {
    const r = run(promtool.require(), ["test", "rules", "alerts.test.yml"], { cwd: DIR });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it("every dashboard expression is valid PromQL", () => {
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => concrete(t.expr)));
    expect(exprs.length).toBeGreaterThan(10);
    const r = checkExpressions(exprs);
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it("the expression check rejects broken PromQL (it can fail)", () => {
    expect(checkExpressions(["sum(rate(tog_http_requests_total[5m])"]).status).not.toBe(0);
  });
});

describe("dashboard and alerts use the documented series", () => {
  it("name only series README lists", () => {
    const used = new Set([...seriesIn(JSON.stringify(dashboard)), ...seriesIn(alerts)]);
    expect([...used].filter((s) => !readmeSeries.has(s))).toEqual([]);
  });

  it("the dashboard shows every documented series", () => {
    const shown = seriesIn(JSON.stringify(dashboard));
    expect([...readmeSeries].filter((s) => !shown.has(s))).toEqual([]);
  });

  it("covers the alerts the operations guide asks for", () => {
    for (const name of ["TogRunsQueueGrowing", "TogRunsRedelivered", "TogHttp5xxRate", "TogStreamSlowConsumerCloses"]) {
      expect(alerts).toContain(`alert: ${name}`);
    }
    expect(dashboard.uid).toBe("tog-overview");
  });
});
