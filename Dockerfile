# syntax=docker/dockerfile:1
# One image per service from one multi-stage file: `docker build --target gateway .`
# There is no compile step: Node 24 runs the TypeScript sources directly (type stripping).

FROM node:24-bookworm-slim AS build
WORKDIR /app
ENV CI=true PRISMA_HIDE_UPDATE_MESSAGE=1
COPY . .
# Dependency install scripts are not needed (Prisma's engines are not used: the client runs on
# @prisma/adapter-pg). Generate the Prisma client, then drop dev dependencies.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm run generate \
 && npm prune --omit=dev --ignore-scripts \
 && rm -rf tests-e2e bench docs k8s deploy .ci

FROM node:24-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build --chown=node:node /app /app
USER node
# Every service answers GET /health on $PORT (gateway under /api/v1).
ENV HEALTH_PATH=/health
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+process.env.HEALTH_PATH).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM

FROM runtime AS migrate
CMD ["node", "libs/db/src/cli/migrate.ts"]

FROM runtime AS bus-setup
CMD ["node", "libs/bus/src/cli/setup.ts"]

FROM runtime AS gateway
ENV PORT=8081 HEALTH_PATH=/api/v1/health
EXPOSE 8081
CMD ["node", "services/gateway/src/main.ts"]

FROM runtime AS model-catalog
ENV PORT=8090
EXPOSE 8090
CMD ["node", "services/model-catalog/src/main.ts"]
