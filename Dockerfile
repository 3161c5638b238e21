# syntax=docker/dockerfile:1
# Plinth's image (docs/running.md#docker): `docker build -t plinth .`, then
# `docker run --init -p 8090:8090 -v plinth-data:/data plinth`.
#
# Node 24 LTS on Debian 12 (bookworm) slim. glibc, not Alpine's musl: better-sqlite3 and sharp ship prebuilt
# binaries for it, so nothing is compiled in the usual case. The tag names the Node major and the Debian
# release, not a patch: a rebuild picks up Node's and Debian's security fixes, while a new major (a new ABI
# for better-sqlite3) or a new Debian stays a deliberate change of this line. For byte-for-byte rebuilds pin
# the digest too (node:24-bookworm-slim@sha256:…); --build-arg NODE_VERSION=26 builds on the next LTS.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# Compilers for a native module with no prebuilt binary for this Node and CPU (better-sqlite3 then builds
# with node-gyp). They stay in this stage; the final image has none.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Production dependencies only: Plinth runs its sources through bin/plinth.js and esbuild (a dependency),
# so no dev tool is needed to build or run it. SCARF_ANALYTICS keeps swagger-ui-dist's install from phoning home.
RUN SCARF_ANALYTICS=false npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
# bin/plinth.js compiles src/ into node_modules/.cache/plinth/<hash of the sources, package.json and
# esbuild's version> when that folder is missing. Compiling here, over the very files the final stage gets,
# means a container starts from the cache and never writes outside DATA_DIR (a read-only root works).
RUN node bin/plinth.js --version

FROM node:${NODE_VERSION}-bookworm-slim
WORKDIR /app
# Owned by root and read-only to the server's user: it never writes there (the cache above is complete).
COPY --from=build /app ./
# The MCP tool server's documentation search reads docs/ beside package.json (src/modules/mcp/docs-index.ts).
COPY docs ./docs
COPY deploy/healthcheck.js ./deploy/healthcheck.js
# Settings (docs/configuration.md): listen on every interface of the container, keep data in the volume.
ENV HOST=0.0.0.0 \
    PORT=8090 \
    DATA_DIR=/data
# A named volume starts as a copy of this folder, so it is the node user's (uid 1000) from the first run.
RUN mkdir /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8090
# No curl in a slim image: a few lines of node ask GET /health (deploy/healthcheck.js).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "deploy/healthcheck.js"]
# `docker run … plinth migrate` or `… plinth --version` run the other commands. Run with --init (compose:
# init: true) so a process reaps orphans; Plinth itself handles SIGTERM (a graceful stop within
# SHUTDOWN_TIMEOUT_MS for requests, then again for jobs: give `docker stop` --time 30).
ENTRYPOINT ["node", "bin/plinth.js"]
CMD ["serve"]
