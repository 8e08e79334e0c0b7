import { readFileSync } from "node:fs";
import path from "node:path";
import { DockerfileParser, type Arg, type Env, type From, type Instruction } from "dockerfile-ast";
import { REPO_ROOT } from "./tools.ts";

// The Dockerfile as stages, and the image configuration each target ends up with (what a
// stage inherits from the stage it is built FROM), read with dockerfile-ast.

export const DOCKERFILE = path.join(REPO_ROOT, "Dockerfile");

export interface Stage {
  name: string;
  /** Image or earlier stage it starts FROM, build arguments resolved. */
  from: string;
  instructions: Instruction[];
}

export interface ImageConfig {
  user: string | undefined;
  /** `CMD [...]` as an array, or ["NONE"]. */
  healthcheck: string[] | undefined;
  env: Record<string, string>;
  cmd: string[] | undefined;
  expose: number[];
  stopSignal: string | undefined;
}

export function parseDockerfile(text = readFileSync(DOCKERFILE, "utf8")) {
  const dockerfile = DockerfileParser.parse(text);
  const args = new Map<string, string>();
  for (const a of dockerfile.getInitialARGs() as Arg[]) {
    const p = a.getProperty();
    if (p?.getName()) args.set(p.getName(), p.getValue() ?? "");
  }
  const resolve = (s: string) => s.replace(/\$\{?(\w+)\}?/g, (_, name: string) => args.get(name) ?? "");
  const stages: Stage[] = [];
  for (const i of dockerfile.getInstructions()) {
    if (i.getKeyword() === "FROM") {
      const from = i as From;
      const image = resolve(`${from.getImageName() ?? ""}${from.getImageTag() ? `:${from.getImageTag()}` : ""}`);
      stages.push({ name: from.getBuildStage() ?? String(stages.length), from: image, instructions: [] });
    } else if (stages.length > 0) {
      stages[stages.length - 1]!.instructions.push(i);
    }
  }
  return { dockerfile, args, stages };
}

const execForm = (content: string | null): string[] => {
  const parsed: unknown = JSON.parse(content ?? "");
  if (!Array.isArray(parsed) || !parsed.every((s) => typeof s === "string"))
    throw new Error(`not an exec form: ${content}`);
  return parsed as string[];
};

/** The configuration of the image a target builds: its own instructions over those of the stages it starts from. */
export function imageConfig(stages: Stage[], target: string): ImageConfig {
  const chain: Stage[] = [];
  for (let s = stages.find((x) => x.name === target); s; s = stages.find((x) => x.name === s!.from)) chain.unshift(s);
  if (chain.length === 0) throw new Error(`no stage ${target}`);
  const config: ImageConfig = {
    user: undefined,
    healthcheck: undefined,
    env: {},
    cmd: undefined,
    expose: [],
    stopSignal: undefined,
  };
  for (const stage of chain) {
    for (const i of stage.instructions) {
      const content = i.getArgumentsContent() ?? "";
      switch (i.getKeyword()) {
        case "USER":
          config.user = content.trim();
          break;
        case "ENV":
          for (const p of (i as Env).getProperties()) config.env[p.getName()] = p.getValue() ?? "";
          break;
        case "CMD":
          config.cmd = execForm(content);
          break;
        case "HEALTHCHECK":
          config.healthcheck = content.trim() === "NONE" ? ["NONE"] : execForm(content.trim().replace(/^CMD\s+/, ""));
          break;
        case "EXPOSE":
          config.expose.push(
            ...content
              .split(/\s+/)
              .filter(Boolean)
              .map((p) => Number.parseInt(p, 10)),
          );
          break;
        case "STOPSIGNAL":
          config.stopSignal = content.trim();
          break;
      }
    }
  }
  return config;
}

/** Stages that are images of their own: they set the command they run. */
export function dockerfileTargets(): Set<string> {
  const { stages } = parseDockerfile();
  return new Set(stages.filter((s) => s.instructions.some((i) => i.getKeyword() === "CMD")).map((s) => s.name));
}
