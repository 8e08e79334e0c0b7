import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { testTiers, tierOf } from "../test-tiers.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

describe("test tiers", () => {
  it("puts tests that use the real infrastructure (directly or through a support file) in integration", () => {
    expect(tierOf(ROOT, "libs/db/test/migrate.test.ts")).toBe("integration");
    // gateway task tests open PostgreSQL and Redis through test/support/task-app.ts
    expect(tierOf(ROOT, "services/gateway/test/tasks.read.test.ts")).toBe("integration");
  });

  it("puts tests that start processes in e2e, by import or by the file's own directive", () => {
    expect(tierOf(ROOT, "services/gateway/test/keys-cli.test.ts")).toBe("e2e");
    expect(tierOf(ROOT, "libs/devstack/test/service-process.test.ts")).toBe("e2e");
    expect(tierOf(ROOT, "tests-e2e/tasks/tasks.test.ts")).toBe("e2e");
  });

  it("keeps pure tests in unit, and every test file in exactly one tier", () => {
    expect(tierOf(ROOT, "libs/events/test/envelope.test.ts")).toBe("unit");
    expect(tierOf(ROOT, "scripts/test/test-tiers.test.ts")).toBe("unit");
    const tiers = testTiers(ROOT);
    const all = [...tiers.unit, ...tiers.unitIsolated, ...tiers.integration, ...tiers.e2e];
    expect(new Set(all).size).toBe(all.length);
    expect(tiers.unit).toContain("libs/core/test/ids.test.ts");
    // sets the process-wide OpenTelemetry provider: isolated from the other unit files
    expect(tiers.unitIsolated).toContain("libs/core/test/telemetry.test.ts");
  });
});
