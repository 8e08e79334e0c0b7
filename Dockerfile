# syntax=docker/dockerfile:1
# One multi-stage file, one target per process (image names as in k8s/ and docker-compose.yml):
#   docker build --target gateway       -t tog/gateway .
#   docker build --target stream        -t tog/stream .
#   docker build --target session       -t tog/session .
#   docker build --target orchestrator  -t tog/orchestrator .
#   docker build --target worker        -t tog/worker .
#   docker build --target model-catalog -t tog/model-catalog .
#   docker build --target console       -t tog/console .      (the web console's page, built by Vite in `build`)
#   docker build --target migrate       -t tog/migrate .      (database migrations + JetStream streams, then exits)
# There is no compile step: Node 24 runs the TypeScript sources directly (type stripping).
# Every target shares the same layers up to `runtime`; only the command and probe settings differ.
# Services start with the telemetry preload (`--import @tog/core/preload`): it instruments HTTP,
# express, gRPC, pg and ioredis only when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/architecture.md).

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS base
WORKDIR /app
ENV CI=true npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# The package manifests alone: the dependency layers below are rebuilt only when one of them
# changes, not on every source edit.
FROM base AS manifests
COPY . /src
RUN cd /src \
 && find . -name node_modules -prune -o \( -name package.json -o -name package-lock.json \) -print \
    | xargs -I{} cp --parents {} /app/

# Every dependency, to generate the Prisma client and the gRPC types and to build the web console's
# page with Vite (the generators and the bundler are dev tools).
FROM base AS build
COPY --from=manifests /app/ ./
# Install scripts are not needed: Prisma's engines are never used (the client runs on
# @prisma/adapter-pg) and there are no native addons in the services' dependency tree.
RUN npm ci --ignore-scripts
COPY . .
RUN npm run generate

# Production dependencies of the services only (no dev tools, no test or bench workspaces).
# --omit=optional also drops the Prisma CLI, which npm would otherwise pull in through an
# optional peer dependency of @prisma/client.
FROM base AS prod
COPY --from=manifests /app/ ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts \
      --workspace=@tog/gateway --workspace=@tog/stream --workspace=@tog/session \
      --workspace=@tog/orchestrator --workspace=@tog/model-catalog --workspace=@tog/console
COPY . .
COPY --from=build /app/libs/db/src/generated libs/db/src/generated
COPY --from=build /app/libs/proto/src/generated libs/proto/src/generated
COPY --from=build /app/services/console/dist services/console/dist

FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
ENV NODE_ENV=production
# The application files stay owned by root: the service user can read them, not change them.
COPY --from=prod /app /app
# The image's `node` user, by number so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# HTTP services answer GET /health on $PORT; the orchestrator and the worker (no HTTP port of
# their own) on their internal ops server ($METRICS_PORT, /health). Targets set HEALTH_PORT.
ENV METRICS_PORT=9464 HEALTH_PATH=/health
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HEALTH_PORT||process.env.PORT)+process.env.HEALTH_PATH,{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Every service drains on SIGTERM within SHUTDOWN_TIMEOUT_MS (default 25 s): keep the stop
# timeout (compose stop_grace_period, Kubernetes terminationGracePeriodSeconds) above it.
STOPSIGNAL SIGTERM
EXPOSE 9464

FROM runtime AS migrate
HEALTHCHECK NONE
CMD ["sh", "-c", "node libs/db/src/cli/migrate.ts && exec node libs/bus/src/cli/setup.ts"]

FROM runtime AS orchestrator
ENV PORT=50051 HEALTH_PORT=9464
EXPOSE 50051
CMD ["node", "--import", "@tog/core/preload", "services/orchestrator/src/main.ts"]

FROM runtime AS worker
ENV HEALTH_PORT=9464
CMD ["node", "--import", "@tog/core/preload", "services/orchestrator/src/worker.ts"]

FROM runtime AS model-catalog
ENV PORT=8090
EXPOSE 8090
CMD ["node", "--import", "@tog/core/preload", "services/model-catalog/src/main.ts"]

FROM runtime AS stream
ENV PORT=8082
EXPOSE 8082
CMD ["node", "--import", "@tog/core/preload", "services/stream/src/main.ts"]

FROM runtime AS session
ENV PORT=8083
EXPOSE 8083
CMD ["node", "--import", "@tog/core/preload", "services/session/src/main.ts"]

FROM runtime AS console
ENV PORT=8084
EXPOSE 8084
CMD ["node", "--import", "@tog/core/preload", "services/console/src/main.ts"]

# Last, so that a plain `docker build .` gives the gateway.
FROM runtime AS gateway
ENV PORT=8081 HEALTH_PATH=/api/v1/health
EXPOSE 8081
CMD ["node", "--import", "@tog/core/preload", "services/gateway/src/main.ts"]
