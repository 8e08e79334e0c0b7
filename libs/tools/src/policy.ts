import { z } from "zod";
import { envList } from "@tog/core";
import { RISK_LEVELS, type AnyTool, type RiskLevel } from "./tool.ts";

/** `none`: no tool ever needs approval on risk grounds (the submitter can still ask for one). */
export type ApprovalThreshold = RiskLevel | "none";

/** Tools at or above `high` wait for a human decision unless configured otherwise. */
export const DEFAULT_APPROVAL_THRESHOLD: ApprovalThreshold = "high";

export function riskRank(level: RiskLevel): number {
  return RISK_LEVELS.indexOf(level);
}

export function isRiskAtLeast(level: RiskLevel, threshold: RiskLevel): boolean {
  return riskRank(level) >= riskRank(threshold);
}

export interface ApprovalPolicy {
  threshold?: ApprovalThreshold;
}

/** True when a call of this tool must wait for APPROVAL_REQUESTED → APPROVAL_DECISION first. */
export function requiresApproval(tool: Pick<AnyTool, "riskLevel">, policy: ApprovalPolicy = {}): boolean {
  const threshold = policy.threshold ?? DEFAULT_APPROVAL_THRESHOLD;
  return threshold !== "none" && isRiskAtLeast(tool.riskLevel, threshold);
}

/** Environment variables of the tool layer; compose into the config shape of the service that runs tools. */
export const toolsConfigShape = {
  TOOL_APPROVAL_THRESHOLD: z
    .enum(["low", "medium", "high", "none"])
    .default(DEFAULT_APPROVAL_THRESHOLD)
    .describe(
      "Tools at or above this risk level (low | medium | high) need a human approval first; none disables the policy.",
    ),
  TOOL_HTTP_FETCH_ALLOWED_HOSTS: envList([]).describe(
    "Comma-separated hosts (host or host:port) the http_fetch tool may reach. Empty: every fetch is refused.",
  ),
};
