import { describe, expect, it } from "vitest";
import { describeConfig, loadConfig } from "@tog/core";
import { orchestratorClientConfigShape } from "@tog/proto";

describe("orchestratorClientConfigShape", () => {
  it("defaults to the local orchestrator, a 5 s deadline and one submit call in flight", () => {
    expect(loadConfig(orchestratorClientConfigShape, {})).toEqual({
      ORCHESTRATOR_ADDRESS: "127.0.0.1:50051",
      ORCHESTRATOR_DEADLINE_MS: 5_000,
      ORCHESTRATOR_SUBMIT_BATCHES: 1,
    });
  });

  it("reads every variable and refuses a deadline below 1 ms", () => {
    expect(
      loadConfig(orchestratorClientConfigShape, {
        ORCHESTRATOR_ADDRESS: "dns:///orchestrator:50051",
        ORCHESTRATOR_DEADLINE_MS: "250",
        ORCHESTRATOR_SUBMIT_BATCHES: "0",
      }),
    ).toEqual({
      ORCHESTRATOR_ADDRESS: "dns:///orchestrator:50051",
      ORCHESTRATOR_DEADLINE_MS: 250,
      ORCHESTRATOR_SUBMIT_BATCHES: 0,
    });
    expect(() => loadConfig(orchestratorClientConfigShape, { ORCHESTRATOR_DEADLINE_MS: "0" })).toThrow(
      /ORCHESTRATOR_DEADLINE_MS/,
    );
  });

  it("documents every variable", () => {
    for (const v of describeConfig(orchestratorClientConfigShape)) expect(v.description.length).toBeGreaterThan(20);
  });
});
