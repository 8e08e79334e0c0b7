import { readdirSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { ConfigMap, Namespace, Secret, Service } from "kubernetes-models/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Job } from "kubernetes-models/batch/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { REPO_ROOT, run } from "./tools.ts";

// Rendering the kustomize overlays with the real kubectl, and validating what they produce
// against the Kubernetes OpenAPI schemas (kubernetes-models).

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

/** Every kind the manifests may contain; anything else is an error, not an unchecked object. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/ConfigMap": ConfigMap,
  "v1/Namespace": Namespace,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "batch/v1/Job": Job,
  "networking.k8s.io/v1/Ingress": Ingress,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
};

export const K8S_DIR = path.join(REPO_ROOT, "k8s");

export const overlayNames = (): string[] =>
  readdirSync(path.join(K8S_DIR, "overlays"), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();

export function renderKustomization(kubectl: string, dir: string): K8sObject[] {
  const r = run(kubectl, ["kustomize", dir]);
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${r.stderr}`);
  // kustomize warns on stderr about deprecated fields; the manifests must not use any.
  if (r.stderr.trim() !== "") throw new Error(`kubectl kustomize ${dir} warned:\n${r.stderr}`);
  return parseAllDocuments(r.stdout).map((doc) => {
    if (doc.errors.length > 0) throw doc.errors[0];
    return doc.toJS() as K8sObject;
  });
}

/** Throws with the object's name and the schema's complaint when it is not a valid object. */
export function validateObject(obj: K8sObject): void {
  const key = `${obj.apiVersion}/${obj.kind}`;
  const Model = MODELS[key];
  const name = `${obj.kind}/${obj.metadata?.name ?? "?"}`;
  if (Model === undefined) throw new Error(`${name}: no schema known for ${key}`);
  try {
    new Model(obj as never).validate();
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}`, { cause: err });
  }
}

export interface IngressRoute {
  ingress: string;
  host: string | undefined;
  path: string;
  pathType: string;
  service: string;
  port: string | number | undefined;
}

export function ingressRoutes(objects: K8sObject[]): IngressRoute[] {
  const routes: IngressRoute[] = [];
  for (const ing of objects.filter(Ingress.is)) {
    for (const rule of ing.spec?.rules ?? []) {
      for (const p of rule.http?.paths ?? []) {
        routes.push({
          ingress: ing.metadata?.name ?? "",
          host: rule.host,
          path: p.path ?? "/",
          pathType: p.pathType,
          service: p.backend.service?.name ?? "",
          port: p.backend.service?.port?.name ?? p.backend.service?.port?.number,
        });
      }
    }
  }
  return routes;
}

/**
 * The service an Ingress sends a request path to, by the Ingress API's rules: the longest
 * matching path wins; a Prefix path matches whole path elements (/api/v1/sessions matches
 * /api/v1/sessions and /api/v1/sessions/x, not /api/v1/sessionsx).
 */
export function ingressServiceFor(routes: IngressRoute[], requestPath: string): string | undefined {
  const elements = (p: string) => p.split("/").filter((e) => e !== "");
  const req = elements(requestPath);
  let best: { length: number; service: string } | undefined;
  for (const r of routes) {
    const matches = r.pathType === "Exact" ? r.path === requestPath : elements(r.path).every((e, i) => req[i] === e);
    const length = r.path.length;
    if (matches && (best === undefined || length > best.length)) best = { length, service: r.service };
  }
  return best?.service;
}

/** Request paths and where the Ingress, the compose edge and `npm start`'s router must send them. */
export const ROUTING_TABLE: Array<{ path: string; service: string | undefined }> = [
  { path: "/api/v1/stream/sse", service: "stream" },
  { path: "/api/v1/stream/ws", service: "stream" },
  { path: "/api/v1/stream/health", service: "stream" },
  { path: "/api/v1/sessions", service: "session" },
  { path: "/api/v1/sessions/3f2c/history", service: "session" },
  { path: "/api/v1/sessionsx", service: "gateway" },
  { path: "/api/v1/streams", service: "gateway" },
  { path: "/api/v1/tasks", service: "gateway" },
  { path: "/api/v1/tasks/stream", service: "gateway" },
  { path: "/api/v1/health", service: "gateway" },
  { path: "/api/v1/openapi.json", service: "gateway" },
  { path: "/api/v1", service: "gateway" },
  { path: "/console", service: "console" },
  { path: "/console/", service: "console" },
  { path: "/console/tasks/3f2c", service: "console" },
  { path: "/console/assets/index-abc.js", service: "console" },
  { path: "/consolex", service: undefined },
  { path: "/health", service: "gateway" },
  { path: "/readiness", service: "gateway" },
  { path: "/healthz", service: undefined },
  { path: "/providers/models", service: undefined },
  { path: "/", service: undefined },
];
