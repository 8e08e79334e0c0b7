import { z } from "zod";
import { defineTool, type JsonValue } from "../tool.ts";
import { jsonValue } from "./json-value.ts";

// The tool itself only validates and describes the change: the task applies it to its
// workspace and emits WORKSPACE_UPDATED {key, value, action} from the returned data. Keeping the
// write outside the tool makes it a checkpointed step like any other, and it is `high` risk so
// the default approval policy puts a human in front of it.

export const MAX_WORKSPACE_VALUE_BYTES = 64 * 1024;

const parameters = z
  .object({
    key: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/, "Use letters, digits and _ . : / - (starting with a letter or digit)")
      .describe('Workspace key, e.g. "report/summary"'),
    action: z
      .enum(["set", "delete"])
      .default("set")
      .describe("set: store value under key; delete: remove the key (default set)"),
    value: jsonValue().optional().describe("set: the JSON value to store (at most 64 KiB serialized)"),
  })
  .strict()
  .superRefine((args, ctx) => {
    if (args.action === "set" && args.value === undefined) {
      ctx.addIssue({ code: "custom", path: ["value"], message: 'Required for action "set"' });
    }
    if (args.action === "delete" && args.value !== undefined) {
      ctx.addIssue({ code: "custom", path: ["value"], message: 'Must be absent for action "delete"' });
    }
    if (args.value !== undefined) {
      const bytes = Buffer.byteLength(JSON.stringify(args.value), "utf8");
      if (bytes > MAX_WORKSPACE_VALUE_BYTES) {
        ctx.addIssue({
          code: "custom",
          path: ["value"],
          message: `Too large: ${bytes} bytes serialized, at most ${MAX_WORKSPACE_VALUE_BYTES}`,
        });
      }
    }
  });

export interface WorkspaceChange {
  key: string;
  value: JsonValue;
  action: "set" | "delete";
}

export const workspaceWriteTool = defineTool({
  name: "workspace_write",
  description:
    "Stores a JSON value under a key in the task's shared workspace (action set) or removes the key (action delete), " +
    "so that later steps and other agents can read it. Needs approval under the default policy.",
  parameters,
  riskLevel: "high",
  timeoutSeconds: 10,
  async execute(args) {
    const change: WorkspaceChange = {
      key: args.key,
      value: args.action === "delete" ? null : (args.value ?? null),
      action: args.action,
    };
    const text =
      change.action === "set" ? `Set workspace key "${change.key}"` : `Deleted workspace key "${change.key}"`;
    return { data: { ...change }, text };
  },
});
