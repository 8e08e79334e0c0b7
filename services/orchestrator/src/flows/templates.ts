import { ValidationError } from "@tog/core";
import { interpolate, type Interpolation } from "./interpolate.ts";

// Built-in prompt templates (context.template / template_name, template_version). A template
// renders to the agent's user prompt, or, with disable_ai, is the whole result. Variables:
// the version's defaults, overridden by prompt_params, plus `query` (the submitted query,
// which prompt_params cannot override). Unknown variables are kept as written.

export interface TemplateVersion {
  version: string;
  text: string;
  defaults: Readonly<Record<string, unknown>>;
}

export interface PromptTemplate {
  name: string;
  description: string;
  /** Oldest first; the last one is `latest`. */
  versions: readonly TemplateVersion[];
}

export const LATEST = "latest";

const TEMPLATES: readonly PromptTemplate[] = [
  {
    name: "summarize",
    description: "Summary of the query text",
    versions: [
      {
        version: "1.0.0",
        text: "Summarize the following in ${max_sentences} sentences:\n\n${query}",
        defaults: { max_sentences: 3 },
      },
      {
        version: "1.1.0",
        text: "Summarize the following for ${audience} in at most ${max_sentences} sentences. Keep names, numbers and dates exact.\n\n${query}",
        defaults: { max_sentences: 3, audience: "a general audience" },
      },
    ],
  },
  {
    name: "explain",
    description: "Explanation of a topic for an audience",
    versions: [
      {
        version: "1.0.0",
        text: "Explain ${query} to ${audience}. Start with a one-sentence answer, then give the details and one concrete example.",
        defaults: { audience: "a beginner" },
      },
    ],
  },
  {
    name: "code_review",
    description: "Review of a code snippet",
    versions: [
      {
        version: "1.0.0",
        text: "Review the following ${language} code. List bugs first, then risky constructs, then style issues, each with a suggested fix.\n\n${query}",
        defaults: { language: "source" },
      },
    ],
  },
  {
    name: "greeting",
    description: "Fixed greeting; meant for disable_ai",
    versions: [
      { version: "1.0.0", text: "Hello ${name}!", defaults: { name: "there" } },
      {
        version: "2.0.0",
        text: "Hello ${name}, welcome to ${product}!",
        defaults: { name: "there", product: "our service" },
      },
    ],
  },
];

const BY_NAME = new Map(TEMPLATES.map((t) => [t.name, t]));

export function promptTemplates(): readonly PromptTemplate[] {
  return TEMPLATES;
}

/** The named version (`latest` or none = the newest). ValidationError for unknown names/versions. */
export function resolveTemplate(
  name: string,
  version: string | undefined,
): { template: PromptTemplate; version: TemplateVersion } {
  const template = BY_NAME.get(name);
  if (!template)
    throw new ValidationError(`Unknown template: "${name}" (available: ${TEMPLATES.map((t) => t.name).join(", ")})`);
  const wanted =
    version === undefined || version === LATEST
      ? template.versions[template.versions.length - 1]
      : template.versions.find((v) => v.version === version);
  if (!wanted) {
    const known = [...template.versions.map((v) => v.version), LATEST].join(", ");
    throw new ValidationError(`Unknown template version: "${version}" for template "${name}" (available: ${known})`);
  }
  return { template, version: wanted };
}

export function renderTemplate(
  version: TemplateVersion,
  promptParams: Readonly<Record<string, unknown>>,
  query: string,
): Interpolation {
  return interpolate(version.text, { ...version.defaults, ...promptParams, query });
}
