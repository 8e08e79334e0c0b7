import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { baseConfigShape, loadConfig, type ConfigShape, type Env } from "@tog/core";
import { dbConfigShape } from "@tog/db";
import { busConfigShape } from "@tog/bus";
import { SERVICES } from "@tog/devstack";
import { gatewayConfigShape } from "@tog/gateway";
import { streamConfigShape } from "@tog/stream";
import { sessionConfigShape } from "@tog/session";
import { orchestratorConfigShape, workerConfigShape } from "@tog/orchestrator";
import { modelCatalogConfigShape } from "@tog/model-catalog";
import { consoleConfigShape } from "@tog/console";
import { ConfigMap, Namespace, Secret, Service } from "kubernetes-models/v1";
import { Deployment, type IDeployment } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Job } from "kubernetes-models/batch/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import type { IIoK8sApiCoreV1Container as Container, IIoK8sApiCoreV1PodSpec as PodSpec } from "kubernetes-models/v1";
import {
  ingressRoutes,
  ingressServiceFor,
  K8S_DIR,
  overlayNames,
  renderKustomization,
  ROUTING_TABLE,
  validateObject,
  type K8sObject,
} from "./manifests.ts";
import { dockerfileTargets } from "./dockerfile.ts";
import { unknownFields } from "./strict-fields.ts";
import { findKubectl, gate, REPO_ROOT } from "./tools.ts";

// Renders k8s/base and every overlay with `kubectl kustomize`, validates every object against
// the Kubernetes schemas, and checks what the issue asks of the manifests.

const OPS_PORT = 9464;
const PROVIDER_KEYS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY"];
/** The token secret and, for rotation, the previous one (an optional key: docs/security.md). */
const TOKEN_SECRETS = ["AUTH_TOKEN_SECRET", "AUTH_TOKEN_SECRET_PREVIOUS"];

interface Expected {
  shape: ConfigShape;
  /** [path, container port name] */
  readiness: [string, string];
  liveness: [string, string];
  /** The container port the service listens on (PORT), by name. */
  servicePort?: string;
  autoscaled: boolean;
  /** Reachable only inside the cluster: no Ingress route, ClusterIP Services, a NetworkPolicy. */
  internal: boolean;
  secrets: string[];
}

const EXPECTED: Record<string, Expected> = {
  gateway: {
    shape: gatewayConfigShape,
    readiness: ["/api/v1/readiness", "http"],
    liveness: ["/api/v1/health", "http"],
    servicePort: "http",
    autoscaled: true,
    internal: false,
    secrets: ["DATABASE_URL", "REDIS_URL", ...TOKEN_SECRETS],
  },
  stream: {
    shape: streamConfigShape,
    readiness: ["/readiness", "http"],
    liveness: ["/health", "http"],
    servicePort: "http",
    autoscaled: true,
    internal: false,
    secrets: ["DATABASE_URL", "REDIS_URL", ...TOKEN_SECRETS],
  },
  session: {
    shape: sessionConfigShape,
    readiness: ["/readiness", "http"],
    liveness: ["/health", "http"],
    servicePort: "http",
    autoscaled: true,
    internal: false,
    secrets: ["DATABASE_URL", "REDIS_URL", ...TOKEN_SECRETS],
  },
  orchestrator: {
    shape: orchestratorConfigShape,
    readiness: ["/health", "metrics"],
    liveness: ["/health", "metrics"],
    servicePort: "grpc",
    autoscaled: false,
    internal: true,
    secrets: ["DATABASE_URL"],
  },
  worker: {
    shape: workerConfigShape,
    readiness: ["/health", "metrics"],
    liveness: ["/health", "metrics"],
    autoscaled: true,
    internal: false,
    secrets: ["DATABASE_URL", ...PROVIDER_KEYS],
  },
  "model-catalog": {
    shape: modelCatalogConfigShape,
    readiness: ["/health", "http"],
    liveness: ["/health", "http"],
    servicePort: "http",
    autoscaled: false,
    internal: true,
    secrets: PROVIDER_KEYS,
  },
  // Static files and /console/config.json: public through the Ingress, no secret, no database.
  console: {
    shape: consoleConfigShape,
    readiness: ["/health", "http"],
    liveness: ["/health", "http"],
    servicePort: "http",
    autoscaled: false,
    internal: false,
    secrets: [],
  },
};

/** Variables the manifests set before the code reads them (the ops server comes with the metrics work). */
const PLANNED_VARIABLES = ["METRICS_PORT"];
/** Stand-ins for the Secret's values, to check that the services accept the whole environment. */
const SECRET_STAND_INS: Env = {
  DATABASE_URL: "postgresql://tog:secret@postgresql:5432/tog",
  REDIS_URL: "redis://:secret@redis-master:6379",
  AUTH_TOKEN_SECRET: randomBytes(32).toString("hex"),
  AUTH_TOKEN_SECRET_PREVIOUS: randomBytes(32).toString("hex"),
  OPENAI_API_KEY: "sk-stand-in",
  ANTHROPIC_API_KEY: "sk-ant-stand-in",
  GOOGLE_API_KEY: "stand-in",
};
const SECRET_NAME = "tog-secrets";

const kubectl = findKubectl();
const tool = gate("kubectl with kustomize >= v4", kubectl);

const deployments = (objects: K8sObject[]) => objects.filter(Deployment.is);
const named = <T extends K8sObject>(objects: T[], name: string): T | undefined =>
  objects.find((o) => o.metadata?.name === name);
const podSpecOf = (d: IDeployment): PodSpec => d.spec!.template.spec!;
const containerOf = (d: IDeployment): Container => {
  const containers = podSpecOf(d).containers;
  expect(containers, `${d.metadata?.name}: one container`).toHaveLength(1);
  return containers[0]!;
};
const portNumber = (c: Container, name: string): number | undefined =>
  c.ports?.find((p) => p.name === name)?.containerPort;
const labelsMatch = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The environment a container starts with: its ConfigMaps in order, then its own variables (secrets as stand-ins). */
function containerEnv(objects: K8sObject[], c: Container): Env {
  const env: Env = {};
  for (const source of c.envFrom ?? []) {
    const name = source.configMapRef?.name;
    expect(name, "envFrom takes ConfigMaps only (secrets are referenced key by key)").toBeDefined();
    const cm = named(objects.filter(ConfigMap.is), name!);
    expect(cm, `ConfigMap ${name} is rendered`).toBeDefined();
    Object.assign(env, cm!.data);
  }
  for (const v of c.env ?? []) {
    if (v.value !== undefined) env[v.name] = v.value;
    else if (v.valueFrom?.secretKeyRef) env[v.name] = SECRET_STAND_INS[v.valueFrom.secretKeyRef.key];
  }
  return env;
}

function checkRendering(label: string, render: () => K8sObject[]) {
  describe(label, () => {
    let objects: K8sObject[];
    beforeAll(() => {
      tool.require();
      objects = render();
    });

    it("renders only objects that are valid against the Kubernetes schemas", () => {
      expect(objects.length).toBeGreaterThan(0);
      for (const obj of objects) validateObject(obj);
    });

    it("uses no field the Kubernetes API does not know (the schemas let unknown fields pass)", () => {
      expect(unknownFields(objects)).toEqual([]);
    });

    it("has a Deployment, a Service and a ConfigMap of its own for every service, and nothing else", () => {
      expect(
        deployments(objects)
          .map((d) => d.metadata?.name)
          .sort(),
      ).toEqual(Object.keys(EXPECTED).sort());
      // The services `npm start` runs are the services deployed.
      expect(SERVICES.map((s) => s.name).sort()).toEqual(Object.keys(EXPECTED).sort());
      for (const d of deployments(objects)) {
        const name = d.metadata!.name!;
        const labels = d.spec!.template.metadata?.labels;
        expect(labelsMatch(d.spec!.selector.matchLabels, labels), `${name}: selector matches its pods`).toBe(true);
        const services = objects.filter(Service.is).filter((s) => labelsMatch(s.spec?.selector, labels));
        expect(services.length, `${name}: a Service selects its pods`).toBeGreaterThan(0);
        const refs = (containerOf(d).envFrom ?? []).map((s) => s.configMapRef?.name ?? "");
        expect(
          refs.some((r) => r.startsWith(`${name}-config`)),
          `${name}: has its own ConfigMap`,
        ).toBe(true);
        expect(
          refs.some((r) => r.startsWith("tog-config")),
          `${name}: reads the shared ConfigMap`,
        ).toBe(true);
      }
    });

    it("gives every Service's selector pods and every target port a named container port", () => {
      for (const s of objects.filter(Service.is)) {
        const pods = deployments(objects).filter((d) =>
          labelsMatch(s.spec?.selector, d.spec!.template.metadata?.labels),
        );
        expect(pods, `Service ${s.metadata?.name} selects exactly one Deployment`).toHaveLength(1);
        expect(
          s.spec?.type ?? "ClusterIP",
          `Service ${s.metadata?.name}: nothing is exposed but through the Ingress`,
        ).toBe("ClusterIP");
        for (const p of s.spec?.ports ?? []) {
          expect(typeof p.targetPort, `Service ${s.metadata?.name}: target ports by name`).toBe("string");
          expect(
            portNumber(containerOf(pods[0]!), p.targetPort as string),
            `Service ${s.metadata?.name} port ${p.name}`,
          ).toBeDefined();
        }
      }
    });

    it("probes every service for readiness and liveness on the right path and port", () => {
      for (const d of deployments(objects)) {
        const name = d.metadata!.name!;
        const c = containerOf(d);
        const { readiness, liveness } = EXPECTED[name]!;
        for (const [kind, probe, [probePath, port]] of [
          ["readiness", c.readinessProbe, readiness],
          ["liveness", c.livenessProbe, liveness],
          ["startup", c.startupProbe, liveness],
        ] as const) {
          expect(probe?.httpGet, `${name}: ${kind} probe`).toBeDefined();
          expect(probe!.httpGet!.path, `${name}: ${kind} path`).toBe(probePath);
          expect(probe!.httpGet!.port, `${name}: ${kind} port`).toBe(port);
          expect(portNumber(c, port), `${name}: port ${port} exists`).toBeDefined();
        }
      }
    });

    it("sets resource requests and limits on every container", () => {
      const pods: Array<[string, PodSpec]> = [
        ...deployments(objects).map((d) => [d.metadata!.name!, podSpecOf(d)] as [string, PodSpec]),
        ...objects.filter(Job.is).map((j) => [j.metadata!.name!, j.spec!.template.spec!] as [string, PodSpec]),
      ];
      for (const [name, spec] of pods) {
        for (const c of spec.containers) {
          for (const r of ["cpu", "memory"]) {
            expect(c.resources?.requests?.[r], `${name}: ${r} request`).toBeDefined();
            expect(c.resources?.limits?.[r], `${name}: ${r} limit`).toBeDefined();
          }
        }
      }
    });

    it("runs every pod as the restricted Pod Security Standard requires", () => {
      const specs = [
        ...deployments(objects).map(podSpecOf),
        ...objects.filter(Job.is).map((j) => j.spec!.template.spec!),
      ];
      for (const spec of specs) {
        expect(spec.securityContext?.runAsNonRoot).toBe(true);
        expect(spec.securityContext?.runAsUser).toBe(1000);
        expect(spec.securityContext?.seccompProfile?.type).toBe("RuntimeDefault");
        expect(spec.automountServiceAccountToken).toBe(false);
        for (const c of spec.containers) {
          expect(c.securityContext?.allowPrivilegeEscalation, c.name).toBe(false);
          expect(c.securityContext?.readOnlyRootFilesystem, c.name).toBe(true);
          expect(c.securityContext?.capabilities?.drop, c.name).toEqual(["ALL"]);
        }
      }
    });

    it("gives each service an environment its config schema accepts, with only variables it knows", () => {
      const known = new Set<string>([...PLANNED_VARIABLES, ...PROVIDER_KEYS]);
      for (const e of Object.values(EXPECTED)) for (const k of Object.keys(e.shape)) known.add(k);
      for (const cm of objects.filter(ConfigMap.is)) {
        for (const key of Object.keys(cm.data ?? {}))
          expect(known.has(key), `${cm.metadata?.name}: ${key} is read by a service`).toBe(true);
      }
      for (const d of deployments(objects)) {
        const name = d.metadata!.name!;
        const { shape, servicePort } = EXPECTED[name]!;
        const c = containerOf(d);
        const own = (c.envFrom ?? []).map((s) => s.configMapRef?.name).find((n) => n?.startsWith(`${name}-config`));
        const ownData = named(objects.filter(ConfigMap.is), own!)?.data ?? {};
        const serviceKnows = new Set([...Object.keys(shape), ...PLANNED_VARIABLES, ...PROVIDER_KEYS]);
        for (const key of Object.keys(ownData))
          expect(serviceKnows.has(key), `${own}: ${name} reads ${key}`).toBe(true);
        const env = containerEnv(objects, c);
        const config = loadConfig(shape, env) as Record<string, unknown>;
        if (servicePort !== undefined)
          expect(config.PORT, `${name}: PORT is the ${servicePort} container port`).toBe(portNumber(c, servicePort));
        expect(Number(env.METRICS_PORT), `${name}: METRICS_PORT`).toBe(OPS_PORT);
      }
    });

    it("references secrets key by key from tog-secrets and commits no secret value", () => {
      expect(objects.filter(Secret.is), "no Secret is rendered").toEqual([]);
      const secretLike = /SECRET|PASSWORD|TOKEN|API_KEY|DATABASE_URL|REDIS_URL/;
      for (const cm of objects.filter(ConfigMap.is)) {
        for (const [key, value] of Object.entries(cm.data ?? {})) {
          expect(secretLike.test(key), `${cm.metadata?.name}: ${key} belongs in the Secret`).toBe(false);
          expect(/\/\/[^/]*@/.test(value), `${cm.metadata?.name}: ${key} carries no credentials`).toBe(false);
        }
      }
      const pods = [
        ...deployments(objects).map((d) => [d.metadata!.name!, podSpecOf(d)] as const),
        ...objects.filter(Job.is).map((j) => [j.metadata!.name!, j.spec!.template.spec!] as const),
      ];
      for (const [name, spec] of pods) {
        for (const c of spec.containers) {
          for (const v of c.env ?? []) {
            if (secretLike.test(v.name))
              expect(v.valueFrom?.secretKeyRef?.name, `${name}: ${v.name} comes from the Secret`).toBe(SECRET_NAME);
          }
          for (const s of c.envFrom ?? []) expect(s.secretRef, `${name}: no whole-Secret envFrom`).toBeUndefined();
        }
        const expected = EXPECTED[name];
        if (expected) {
          const keys = spec.containers.flatMap((c) =>
            (c.env ?? []).flatMap((v) => (v.valueFrom?.secretKeyRef ? [v.valueFrom.secretKeyRef.key] : [])),
          );
          expect(keys.sort(), `${name}: secret keys`).toEqual([...expected.secrets].sort());
        }
      }
    });

    it("passes the previous token secret (optional key) to every service that verifies tokens: rotation works", () => {
      const verifiers = Object.entries(EXPECTED).filter(([, e]) => e.secrets.includes("AUTH_TOKEN_SECRET"));
      expect(verifiers.map(([name]) => name).sort()).toEqual(["gateway", "session", "stream"]);
      for (const [name, expected] of verifiers) {
        const d = named(deployments(objects), name)!;
        const c = containerOf(d);
        const ref = (key: string) => (c.env ?? []).find((v) => v.name === key)?.valueFrom?.secretKeyRef;
        expect(ref("AUTH_TOKEN_SECRET"), `${name}: AUTH_TOKEN_SECRET`).toMatchObject({
          name: SECRET_NAME,
          key: "AUTH_TOKEN_SECRET",
        });
        expect(ref("AUTH_TOKEN_SECRET")?.optional, `${name}: the current secret is required`).not.toBe(true);
        // Optional: a Secret without it (no rotation under way) still starts the pods.
        expect(ref("AUTH_TOKEN_SECRET_PREVIOUS"), `${name}: AUTH_TOKEN_SECRET_PREVIOUS`).toEqual({
          name: SECRET_NAME,
          key: "AUTH_TOKEN_SECRET_PREVIOUS",
          optional: true,
        });
        const config = loadConfig(expected.shape, containerEnv(objects, c)) as Record<string, unknown>;
        expect(config.AUTH_TOKEN_SECRET_PREVIOUS, `${name}: the service reads it`).toBe(
          SECRET_STAND_INS.AUTH_TOKEN_SECRET_PREVIOUS,
        );
      }
    });

    it("stops every service gracefully within its termination grace period", () => {
      for (const d of deployments(objects)) {
        const name = d.metadata!.name!;
        const c = containerOf(d);
        const env = containerEnv(objects, c);
        const shutdownMs = Number(env.SHUTDOWN_TIMEOUT_MS);
        expect(shutdownMs, `${name}: SHUTDOWN_TIMEOUT_MS is set`).toBeGreaterThan(0);
        const sleep = c.lifecycle?.preStop?.exec?.command;
        const preStopMs = sleep ? Number(sleep[1]) * 1000 : 0;
        if (sleep) expect(sleep[0]).toBe("sleep");
        const graceMs = (podSpecOf(d).terminationGracePeriodSeconds ?? 30) * 1000;
        expect(preStopMs + shutdownMs, `${name}: preStop + shutdown < grace period`).toBeLessThan(graceMs);
        if (EXPECTED[name]!.servicePort !== undefined)
          expect(preStopMs, `${name}: drains its endpoints before stopping`).toBeGreaterThan(0);
      }
    });

    it("annotates every pod for Prometheus on the internal ops port", () => {
      for (const d of deployments(objects)) {
        const name = d.metadata!.name!;
        const a = d.spec!.template.metadata?.annotations ?? {};
        expect(a["prometheus.io/scrape"], name).toBe("true");
        expect(a["prometheus.io/port"], name).toBe(String(OPS_PORT));
        expect(a["prometheus.io/path"], name).toBe("/metrics");
        expect(portNumber(containerOf(d), "metrics"), `${name}: metrics port`).toBe(OPS_PORT);
      }
    });

    it("autoscales the gateway, stream, session and workers, and leaves their replica count to the autoscaler", () => {
      const hpas = objects.filter(HorizontalPodAutoscaler.is);
      for (const d of deployments(objects)) {
        const name = d.metadata!.name!;
        const hpa = hpas.find(
          (h) => h.spec?.scaleTargetRef.kind === "Deployment" && h.spec.scaleTargetRef.name === name,
        );
        if (EXPECTED[name]!.autoscaled) {
          expect(hpa, `${name}: HorizontalPodAutoscaler`).toBeDefined();
          expect(hpa!.spec!.minReplicas ?? 1).toBeGreaterThanOrEqual(1);
          expect(hpa!.spec!.maxReplicas).toBeGreaterThanOrEqual(hpa!.spec!.minReplicas ?? 1);
          expect(hpa!.spec!.metrics?.length, `${name}: scaling metrics`).toBeGreaterThan(0);
          expect(d.spec!.replicas, `${name}: no replicas beside an autoscaler`).toBeUndefined();
        } else {
          expect(hpa, `${name}: not autoscaled`).toBeUndefined();
          expect(d.spec!.replicas, `${name}: replicas`).toBeGreaterThanOrEqual(1);
        }
      }
      expect(hpas).toHaveLength(Object.values(EXPECTED).filter((e) => e.autoscaled).length);
    });

    it("guards every Deployment with a PodDisruptionBudget that never blocks a drain", () => {
      const pdbs = objects.filter(PodDisruptionBudget.is);
      for (const d of deployments(objects)) {
        const matching = pdbs.filter((p) =>
          labelsMatch(p.spec?.selector?.matchLabels, d.spec!.template.metadata?.labels),
        );
        expect(matching, `${d.metadata?.name}: one PodDisruptionBudget`).toHaveLength(1);
        expect(matching[0]!.spec!.maxUnavailable, `${d.metadata?.name}: maxUnavailable`).toBe(1);
      }
    });

    it("routes the public paths through the Ingress like the dev router, with streaming-friendly settings", () => {
      const routes = ingressRoutes(objects);
      const dev = SERVICES.flatMap((s) => (s.routes ?? []).map((r) => ({ path: r.prefix, service: s.name })));
      expect(
        routes.map((r) => ({ path: r.path, service: r.service })).sort((a, b) => a.path.localeCompare(b.path)),
      ).toEqual(dev.sort((a, b) => a.path.localeCompare(b.path)));
      for (const r of routes) expect(r.pathType, r.path).toBe("Prefix");
      for (const { path: requestPath, service } of ROUTING_TABLE)
        expect(ingressServiceFor(routes, requestPath), requestPath).toBe(service);
      for (const r of routes) {
        const svc = named(objects.filter(Service.is), r.service);
        expect(
          svc?.spec?.ports?.some((p) => p.name === r.port),
          `${r.path}: Service ${r.service} has port ${r.port}`,
        ).toBe(true);
      }

      const ingresses = objects.filter(Ingress.is);
      const streamIngress = ingresses.find((i) => ingressRoutes([i]).some((r) => r.service === "stream"))!;
      expect(
        ingressRoutes([streamIngress]).map((r) => r.service),
        "stream settings apply to streams only",
      ).toEqual(["stream"]);
      const a = streamIngress.metadata?.annotations ?? {};
      expect(a["nginx.ingress.kubernetes.io/proxy-buffering"]).toBe("off");
      expect(Number(a["nginx.ingress.kubernetes.io/proxy-read-timeout"])).toBeGreaterThanOrEqual(3600);
      expect(Number(a["nginx.ingress.kubernetes.io/proxy-send-timeout"])).toBeGreaterThanOrEqual(3600);
      expect(a["nginx.org/proxy-buffering"]).toBe("False");
      for (const i of ingresses.filter((x) => x !== streamIngress)) {
        expect(
          Number(i.metadata?.annotations?.["nginx.ingress.kubernetes.io/proxy-read-timeout"]),
          i.metadata?.name,
        ).toBeGreaterThanOrEqual(30);
      }
      for (const i of ingresses) expect(i.spec?.ingressClassName, i.metadata?.name).toBeDefined();
    });

    it("keeps the orchestrator and the model catalog internal", () => {
      const routed = new Set(ingressRoutes(objects).map((r) => r.service));
      for (const [name, e] of Object.entries(EXPECTED).filter(([, e]) => e.internal)) {
        const labels = named(deployments(objects), name)!.spec!.template.metadata?.labels;
        const services = objects.filter(Service.is).filter((s) => labelsMatch(s.spec?.selector, labels));
        for (const s of services)
          expect(routed.has(s.metadata!.name!), `${s.metadata?.name} has no Ingress route`).toBe(false);
        const policies = objects
          .filter(NetworkPolicy.is)
          .filter((p) => labelsMatch(p.spec?.podSelector?.matchLabels, labels));
        expect(policies, `${name}: a NetworkPolicy admits only its callers`).toHaveLength(1);
        expect(e.autoscaled).toBe(false);
      }
      const grpcFrom = named(objects.filter(NetworkPolicy.is), "orchestrator")!.spec!.ingress!.find((r) =>
        r.ports?.some((p) => p.port === "grpc"),
      );
      expect(grpcFrom?.from?.map((f) => f.podSelector?.matchLabels)).toEqual([{ "app.kubernetes.io/name": "gateway" }]);
    });

    it("points the gateway at every orchestrator pod through a headless Service", () => {
      const gateway = named(deployments(objects), "gateway")!;
      const address = containerEnv(objects, containerOf(gateway)).ORCHESTRATOR_ADDRESS ?? "";
      const m = /^dns:\/\/\/([a-z0-9-]+):(\d+)$/.exec(address);
      expect(m, `ORCHESTRATOR_ADDRESS=${address}`).not.toBeNull();
      const headless = named(objects.filter(Service.is), m![1]!);
      expect(headless?.spec?.clusterIP, "headless").toBe("None");
      // A headless name resolves to pod addresses: the port must be the container's own.
      const orchestrator = named(deployments(objects), "orchestrator")!;
      expect(labelsMatch(headless!.spec!.selector, orchestrator.spec!.template.metadata?.labels)).toBe(true);
      expect(portNumber(containerOf(orchestrator), "grpc")).toBe(Number(m![2]));
    });

    it("runs the migrations and the JetStream setup in a Job", () => {
      const jobs = objects.filter(Job.is);
      expect(jobs).toHaveLength(1);
      const spec = jobs[0]!.spec!.template.spec!;
      expect(["Never", "OnFailure"]).toContain(spec.restartPolicy);
      const command = (spec.containers[0]!.command ?? []).join(" ");
      expect(command).toMatch(/libs\/db\/src\/cli\/migrate\.ts && .*libs\/bus\/src\/cli\/setup\.ts/);
      const env = containerEnv(objects, spec.containers[0]!);
      const config = loadConfig({ ...baseConfigShape, ...dbConfigShape, ...busConfigShape }, env);
      expect(env.DATABASE_URL).toBeDefined();
      // Production's NATS is a 3-server cluster: every stream has 3 copies (docs/reliability.md "NATS").
      expect(config.NATS_STREAM_REPLICAS ?? 1).toBe(label.endsWith("/prod") ? 3 : 1);
    });

    it("uses an image built by a Dockerfile target for every container, with an explicit tag", () => {
      const targets = dockerfileTargets();
      const containers = [
        ...deployments(objects).map((d) => containerOf(d)),
        ...objects.filter(Job.is).map((j) => j.spec!.template.spec!.containers[0]!),
      ];
      for (const c of containers) {
        const m = /^(?:.*\/)?([a-z0-9-]+)(?::([\w.-]+))?$/.exec(c.image ?? "");
        expect(m, c.image).not.toBeNull();
        expect(targets.has(m![1]!), `${c.image}: a Dockerfile target`).toBe(true);
        if (label !== "k8s/base") expect(m![2] ?? "latest", `${c.image}: explicit tag`).not.toBe("latest");
      }
    });

    if (label !== "k8s/base") {
      it("puts everything in the overlay's namespace, which enforces the restricted Pod Security Standard", () => {
        const namespaces = objects.filter(Namespace.is);
        expect(namespaces).toHaveLength(1);
        const ns = namespaces[0]!.metadata!.name!;
        expect(namespaces[0]!.metadata?.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
        for (const o of objects.filter((x) => !Namespace.is(x)))
          expect(o.metadata?.namespace, `${o.kind}/${o.metadata?.name}`).toBe(ns);
      });
    }
  });
}

describe.skipIf(tool.skip)("Kubernetes manifests (kubectl kustomize + kubernetes-models)", () => {
  it("has a dev and a prod overlay", () => {
    expect(overlayNames()).toEqual(expect.arrayContaining(["dev", "prod"]));
  });

  checkRendering("k8s/base", () => renderKustomization(kubectl!, path.join(K8S_DIR, "base")));
  for (const overlay of overlayNames()) {
    checkRendering(`k8s/overlays/${overlay}`, () =>
      renderKustomization(kubectl!, path.join(K8S_DIR, "overlays", overlay)),
    );
  }

  it("documents the Secret's required keys in the README's Deploy section", () => {
    const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    const deploy = readme.slice(readme.indexOf("## Deploy"));
    const required = new Set(Object.values(EXPECTED).flatMap((e) => e.secrets));
    for (const key of required) expect(deploy, `README Deploy mentions ${key}`).toContain(key);
    expect(deploy).toContain(SECRET_NAME);
  });
});
