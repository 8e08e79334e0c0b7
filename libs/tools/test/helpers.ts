import {
  builtinTools,
  createToolRegistry,
  type BuiltinToolsOptions,
  type InvokeOptions,
  type JsonValue,
} from "../src/index.ts";

export function registryFor(options: BuiltinToolsOptions = {}) {
  return createToolRegistry(builtinTools(options));
}

const shared = registryFor();

/** Invokes a built-in tool and returns its data, failing the test when the call fails. */
export async function ok(name: string, args: unknown, options?: InvokeOptions): Promise<any> {
  const outcome = await shared.invoke(name, args, options);
  if (!outcome.ok) throw new Error(`expected ${name} to succeed, got ${outcome.errorType}: ${outcome.error.message}`);
  return outcome.result.data as JsonValue;
}

/** Invokes a built-in tool that must fail; returns the failure. */
export async function fails(name: string, args: unknown, options?: InvokeOptions) {
  const outcome = await shared.invoke(name, args, options);
  if (outcome.ok) throw new Error(`expected ${name} to fail, got ${JSON.stringify(outcome.result.data)}`);
  return outcome;
}
