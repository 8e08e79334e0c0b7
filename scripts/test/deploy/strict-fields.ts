import path from "node:path";
import ts from "typescript";
import type { K8sObject } from "./manifests.ts";
import { REPO_ROOT } from "./tools.ts";

// The JSON schemas accept fields they do not know, so a misspelt field (`readinesProbe`) would
// pass them unnoticed. TypeScript does not: each rendered object is checked as an object
// literal of its kubernetes-models type, whose excess-property check names any unknown field.

const TYPES: Record<string, { module: string; type: string }> = {
  "v1/ConfigMap": { module: "kubernetes-models/v1", type: "IConfigMap" },
  "v1/Namespace": { module: "kubernetes-models/v1", type: "INamespace" },
  "v1/Secret": { module: "kubernetes-models/v1", type: "ISecret" },
  "v1/Service": { module: "kubernetes-models/v1", type: "IService" },
  "apps/v1/Deployment": { module: "kubernetes-models/apps/v1", type: "IDeployment" },
  "autoscaling/v2/HorizontalPodAutoscaler": {
    module: "kubernetes-models/autoscaling/v2",
    type: "IHorizontalPodAutoscaler",
  },
  "batch/v1/Job": { module: "kubernetes-models/batch/v1", type: "IJob" },
  "networking.k8s.io/v1/Ingress": { module: "kubernetes-models/networking.k8s.io/v1", type: "IIngress" },
  "networking.k8s.io/v1/NetworkPolicy": { module: "kubernetes-models/networking.k8s.io/v1", type: "INetworkPolicy" },
  "policy/v1/PodDisruptionBudget": { module: "kubernetes-models/policy/v1", type: "IPodDisruptionBudget" },
};

/** One message per object field the Kubernetes API types do not have (empty when there is none). */
export function unknownFields(objects: K8sObject[]): string[] {
  const file = path.join(REPO_ROOT, "scripts/test/deploy/__rendered_manifests__.ts");
  const imports = new Map<string, Set<string>>();
  const lines: string[] = [];
  objects.forEach((obj, i) => {
    const t = TYPES[`${obj.apiVersion}/${obj.kind}`];
    if (t === undefined) throw new Error(`no type known for ${obj.apiVersion}/${obj.kind}`);
    if (!imports.has(t.module)) imports.set(t.module, new Set());
    imports.get(t.module)!.add(t.type);
    lines.push(
      `// ${obj.kind}/${obj.metadata?.name ?? "?"}`,
      `export const o${i}: ${t.type} = ${JSON.stringify(obj, null, 2)};`,
    );
  });
  const source = [
    ...[...imports].map(([m, names]) => `import type { ${[...names].join(", ")} } from "${m}";`),
    ...lines,
  ].join("\n");

  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (f) => (path.resolve(f) === file ? source : readFile(f));
  host.fileExists = (
    (exists) => (f: string) =>
      path.resolve(f) === file || exists(f)
  )(host.fileExists.bind(host));
  host.getSourceFile = (f, lang, onError, create) =>
    path.resolve(f) === file ? ts.createSourceFile(f, source, lang, true) : getSourceFile(f, lang, onError, create);
  const program = ts.createProgram([file], options, host);
  const sf = program.getSourceFile(file)!;
  const sourceLines = source.split("\n");
  // The object a message is about: the nearest `// Kind/name` line above it.
  const ownerOf = (line: number) => {
    for (let l = line; l >= 0; l--) if (sourceLines[l]!.startsWith("// ")) return sourceLines[l]!.slice(3);
    return "?";
  };
  return ts.getPreEmitDiagnostics(program, sf).map((d) => {
    const line = d.start === undefined ? 0 : sf.getLineAndCharacterOfPosition(d.start).line;
    return `${ownerOf(line)}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
  });
}
