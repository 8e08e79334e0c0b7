import { describe, expect, it } from "vitest";
import { loadConfig } from "@tog/core";
import {
  DEFAULT_APPROVAL_THRESHOLD,
  builtinTools,
  isRiskAtLeast,
  requiresApproval,
  toolsConfigShape,
} from "../src/index.ts";

const tools = Object.fromEntries(builtinTools().map((t) => [t.name, t]));

describe("approval policy", () => {
  it("gives each built-in tool its documented risk level", () => {
    expect(Object.fromEntries(Object.values(tools).map((t) => [t.name, [t.riskLevel, t.timeoutSeconds]]))).toEqual({
      calculator: ["low", 5],
      datetime: ["low", 5],
      json: ["low", 5],
      text: ["low", 5],
      workspace_write: ["high", 10],
      http_fetch: ["high", 15],
    });
  });

  it("orders risk levels", () => {
    expect(isRiskAtLeast("high", "medium")).toBe(true);
    expect(isRiskAtLeast("medium", "medium")).toBe(true);
    expect(isRiskAtLeast("low", "medium")).toBe(false);
  });

  it("by default gates only high-risk tools", () => {
    expect(DEFAULT_APPROVAL_THRESHOLD).toBe("high");
    expect(requiresApproval(tools.workspace_write!)).toBe(true);
    expect(requiresApproval(tools.http_fetch!)).toBe(true);
    expect(requiresApproval(tools.calculator!)).toBe(false);
  });

  it("gates every tool at or above the configured threshold", () => {
    expect(requiresApproval({ riskLevel: "medium" }, { threshold: "medium" })).toBe(true);
    expect(requiresApproval({ riskLevel: "medium" }, { threshold: "high" })).toBe(false);
    expect(requiresApproval(tools.calculator!, { threshold: "low" })).toBe(true);
    expect(requiresApproval(tools.workspace_write!, { threshold: "none" })).toBe(false);
  });

  it("reads the threshold and the fetch allow-list from the environment", () => {
    expect(loadConfig(toolsConfigShape, {})).toEqual({
      TOOL_APPROVAL_THRESHOLD: "high",
      TOOL_HTTP_FETCH_ALLOWED_HOSTS: [],
    });
    expect(
      loadConfig(toolsConfigShape, {
        TOOL_APPROVAL_THRESHOLD: "medium",
        TOOL_HTTP_FETCH_ALLOWED_HOSTS: "127.0.0.1:9000, api.example.com",
      }),
    ).toEqual({
      TOOL_APPROVAL_THRESHOLD: "medium",
      TOOL_HTTP_FETCH_ALLOWED_HOSTS: ["127.0.0.1:9000", "api.example.com"],
    });
    expect(() => loadConfig(toolsConfigShape, { TOOL_APPROVAL_THRESHOLD: "extreme" })).toThrow(
      /TOOL_APPROVAL_THRESHOLD/,
    );
  });
});
