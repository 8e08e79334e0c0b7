import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { builtinTools, createToolRegistry } from "../src/index.ts";

const registry = createToolRegistry(builtinTools());
const definitions = Object.fromEntries(registry.definitionsForLlm().map((d) => [d.name, d]));
const ajv = new Ajv2020({ strict: true, allErrors: true });

// Arguments a model could send, valid per the schema and accepted by the tool.
const samples: Record<string, Record<string, unknown>> = {
  calculator: { expression: "1 + 1" },
  datetime: { operation: "add", date: "2024-01-01", duration: { days: 1 }, timezone: "Europe/Berlin" },
  json: { operation: "query", value: { a: [1, 2] }, expression: "a[0]" },
  text: { operation: "truncate", text: "hello", max_length: 3 },
  workspace_write: { key: "notes/summary", value: { done: true } },
  http_fetch: { url: "http://127.0.0.1:1/x", headers: { accept: "text/plain" } },
};

describe("JSON Schema of each tool", () => {
  it("covers every built-in tool", () => {
    expect(Object.keys(definitions).sort()).toEqual(Object.keys(samples).sort());
  });

  it.each(Object.keys(samples))(
    "%s: a strict draft 2020-12 object schema with the expected required fields",
    async (name) => {
      const definition = definitions[name]!;
      expect(definition.description.length).toBeGreaterThan(20);
      const schema = definition.parameters;
      expect(schema.$schema).toBeUndefined();
      expect(schema.type).toBe("object");
      expect(schema.additionalProperties).toBe(false);
      expect(() => ajv.compile(schema)).not.toThrow();

      const required: Record<string, string[]> = {
        calculator: ["expression"],
        datetime: ["operation"],
        json: ["operation"],
        text: ["operation", "text"],
        workspace_write: ["key"],
        http_fetch: ["url"],
      };
      expect(schema.required).toEqual(required[name]);
      // Every property carries a description for the model.
      for (const [property, spec] of Object.entries(schema.properties as Record<string, { description?: string }>)) {
        expect(spec.description, `${name}.${property}`).toBeTruthy();
      }

      const validate = ajv.compile(schema);
      expect(validate(samples[name]), JSON.stringify(validate.errors)).toBe(true);
      expect(validate({ ...samples[name], unexpected: 1 })).toBe(false);
      const outcome = await registry.invoke(name, samples[name]);
      // http_fetch is deny-all by default: the arguments are valid, the host is refused.
      if (name === "http_fetch") expect(outcome).toMatchObject({ ok: false, errorType: "TOOL_EXECUTION_FAILED" });
      else expect(outcome.ok).toBe(true);
    },
  );

  it("publishes enums and defaults the model can rely on", () => {
    const datetime = definitions.datetime!.parameters.properties as Record<string, Record<string, unknown>>;
    expect(datetime.operation!.enum).toEqual(["now", "add", "diff", "format", "parse"]);
    expect(datetime.timezone!.default).toBe("UTC");
    const calculator = definitions.calculator!.parameters.properties as Record<string, Record<string, unknown>>;
    expect(calculator.precision).toMatchObject({ type: "integer", minimum: 1, maximum: 64, default: 15 });
  });
});
