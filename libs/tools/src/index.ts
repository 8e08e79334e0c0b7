export {
  type AnyTool,
  defineTool,
  type JsonSchema,
  type JsonValue,
  type LlmToolDefinition,
  RISK_LEVELS,
  type RiskLevel,
  type Tool,
  type ToolContext,
  toolJsonSchema,
  type ToolResult,
  toolText,
} from "./tool.ts";
export { errorTypeOf, formatZodIssues, invalidArguments, ToolError, type ToolErrorType } from "./errors.ts";
export {
  type ApprovalPolicy,
  type ApprovalThreshold,
  DEFAULT_APPROVAL_THRESHOLD,
  isRiskAtLeast,
  requiresApproval,
  riskRank,
  toolsConfigShape,
} from "./policy.ts";
export { createToolRegistry, type InvokeOptions, type ToolInvocation, type ToolRegistry } from "./registry.ts";
export { builtinTools, type BuiltinToolsOptions } from "./builtin/index.ts";
export { calculate, calculatorTool, type Calculation } from "./builtin/calculator.ts";
export { datetimeTool } from "./builtin/datetime.ts";
export { diffJson, findJsonError, jsonTool, type JsonChange, type JsonSyntaxProblem } from "./builtin/json.ts";
export {
  changeCase,
  countText,
  createTextTool,
  truncateText,
  type TextCounts,
  type TextToolOptions,
} from "./builtin/text.ts";
export { MAX_WORKSPACE_VALUE_BYTES, workspaceWriteTool, type WorkspaceChange } from "./builtin/workspace-write.ts";
export { DEFAULT_HTTP_FETCH_MAX_BYTES, createHttpFetchTool, type HttpFetchOptions } from "./builtin/http-fetch.ts";
export { isJsonValue } from "./builtin/json-value.ts";
