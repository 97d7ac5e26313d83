# gpu-doctor chat bot on Node 24, the current LTS (CI runs the suite on Node 20, 22 and 24).
# Multi-stage: native modules (better-sqlite3, re2) are compiled in the build stage
# by the same `npm ci` CI runs (its `prepare` builds dist/); then dev dependencies are pruned, and so are
# the compile-time tools (node-gyp, nan, C++ sources: scripts/prune-build-tools.mjs). The runtime stage
# gets only what runs: bin/, dist/ (the bundled CLI and rule cache), knowledge/, the chart fonts and
# node_modules/, as the unprivileged `node` user. No ssh binary is needed: SSH is spoken by the ssh2 library.
# On 24 `prepare` also drops ssh2's native crypto binding (scripts/ssh2-js-crypto.mjs) and the stores load
# better-sqlite3 13, the Node-API build (src/storage/sqlite-driver.ts); both are compiled here where no prebuilt
# binary can be downloaded.
# /healthz and /metrics listen on 0.0.0.0:9464 inside the container (HEALTH_HOST/HEALTH_PORT; outside a
# container the default is 127.0.0.1), so `-p 9464:9464` reaches them; 3000 is Slack's HTTP mode (PORT).
#   docker build -t gpu-doctor .
#   docker run -d --env-file bot.env -p 127.0.0.1:9464:9464 -v gpu-doctor-data:/app/data gpu-doctor
FROM node:24-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
COPY commands ./commands
COPY knowledge ./knowledge
COPY tsconfig.json ./
RUN npm ci \
 && npm prune --omit=dev \
 && node scripts/prune-build-tools.mjs \
 && npm cache clean --force

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HEALTH_PORT=9464 \
    HEALTH_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/knowledge ./knowledge
COPY assets/fonts ./assets/fonts
COPY locales ./locales
COPY --from=build /app/node_modules ./node_modules
RUN mkdir -p /app/data && chown node:node /app/data && chmod 700 /app/data
USER node
VOLUME /app/data
EXPOSE 9464 3000
HEALTHCHECK --interval=30s --timeout=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.HEALTH_PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "bin/gpu-doctor", "bot"]
