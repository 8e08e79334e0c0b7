import type { AnyTool } from "../tool.ts";
import { calculatorTool } from "./calculator.ts";
import { datetimeTool } from "./datetime.ts";
import { createHttpFetchTool, type HttpFetchOptions } from "./http-fetch.ts";
import { jsonTool } from "./json.ts";
import { createTextTool, type TextToolOptions } from "./text.ts";
import { workspaceWriteTool } from "./workspace-write.ts";

export interface BuiltinToolsOptions {
  httpFetch?: HttpFetchOptions;
  text?: TextToolOptions;
}

/** The built-in tools, in a stable order: calculator, datetime, json, text, workspace_write, http_fetch. */
export function builtinTools(options: BuiltinToolsOptions = {}): AnyTool[] {
  return [
    calculatorTool,
    datetimeTool,
    jsonTool,
    createTextTool(options.text),
    workspaceWriteTool,
    createHttpFetchTool(options.httpFetch),
  ] as AnyTool[];
}
