// Starts whichever chat adapters of the registry (src/adapters/index.ts) the environment configures
// (Slack with SLACK_BOT_TOKEN, Discord with DISCORD_TOKEN), plus the audit store, metrics and the optional
// /healthz + /metrics endpoint. Returns null when no chat token is set (the caller runs the console chat
// instead). Each adapter's module is imported only when its token is set (its descriptor's start()).
import { httpEndpointOf } from '../config.js';
import type { App } from '../app.js';
import type { Reply } from '../core/reply.js';
import type { ServerPlatform } from '../core/platform.js';
import type { PostTarget } from '../core/services.js';
import type { AuditSink } from '../ops/audit.js';
import type { StartedAdapter } from './platform-adapter.js';
import { Metrics } from '../ops/metrics.js';
import { Health, startHealthServer } from '../ops/health.js';
import { createLogger, scrubSecrets, type Logger } from '../ops/logger.js';
import { chatModeOf, parseEnv, registeredAdapters } from './index.js';

export interface RunningBots {
  adapters: string[];
  healthPort?: number;
  /** The Slack HTTP-mode port, once listening (PORT may be 0 to pick a free one). */
  slackPort?: number;
  stop(): Promise<void>;
}

export async function startChatAdapters(app: App, env: NodeJS.ProcessEnv = process.env, logger: Logger = createLogger()): Promise<RunningBots | null> {
  parseEnv(env); // fails naming every bad key before anything connects
  const configured = registeredAdapters().flatMap((adapter) => {
    const settings = adapter.settingsFrom(env);
    return settings === null ? [] : [{ adapter, settings }];
  });
  // One line, before anything connects: what this process is and which variables made it so.
  const { mode, why } = chatModeOf(env);
  logger.info({ mode, why }, `gpu-doctor runs as ${mode}: ${why}`);
  if (!configured.length) return null;
  const { config } = app.loaded;
  const audit: AuditSink = app.audit((e) => logger.error({ err: scrubSecrets((e as Error).message ?? String(e)) }, 'audit write failed'));
  const metrics = new Metrics(true);
  const health = new Health(metrics);
  // Per-host pool state in /healthz, and per-host SSH latency and errors in /metrics.
  const hosts = app.services.hosts as { hostStates?: () => Record<string, string>; onResult?: (h: string, s: number, ok: boolean) => void } | undefined;
  if (hosts?.hostStates) health.hostStates = () => hosts.hostStates!();
  if (hosts) {
    hosts.onResult = (host, seconds, ok) => {
      metrics.sshExecSeconds.observe({ host }, seconds);
      if (!ok) metrics.sshErrors.inc({ host });
    };
  }
  const deps = { registry: app.registry, services: app.services, config, logger, audit, metrics, health };
  const stops: (() => Promise<void>)[] = [];
  const names: string[] = [];
  let healthPort: number | undefined;
  const ports: Partial<Record<ServerPlatform, number>> = {};
  try {
    // http.port/http.host from the config, else HEALTH_PORT/HEALTH_HOST (the Docker image sets both).
    const endpoint = httpEndpointOf(config, env);
    if (endpoint) {
      const srv = await startHealthServer({ ...endpoint, health, metrics });
      healthPort = srv.port;
      stops.push(srv.close);
      logger.info({ port: srv.port, host: endpoint.host }, 'health and metrics endpoint listening');
    }
    const posters: Partial<Record<ServerPlatform, StartedAdapter>> = {};
    for (const { adapter, settings } of configured) {
      const started = await adapter.start(deps, settings, env);
      stops.push(() => started.stop());
      names.push(started.label);
      ports[adapter.name] = started.port;
      posters[adapter.name] = started;
    }
    // Scheduled leak digests (and the weekly feedback list) go to the channel each names, through the adapter of its platform.
    const postTo = async (target: PostTarget, reply: Reply) => {
      const adapter = target.platform === 'console' ? undefined : posters[target.platform];
      if (!adapter) throw new Error(`${target.kind === 'dm' ? target.name : `digest "${target.name}"`} is for ${target.platform}, which is not connected`);
      await (target.kind === 'dm' ? adapter.postToUser(target.channel, reply) : adapter.postToChannel(target.channel, reply));
    };
    app.services.watch?.setPoster?.(postTo);
    app.services.schedules?.setPoster(postTo);
  } catch (e) {
    for (const s of stops.reverse()) await s().catch(() => {});
    audit.close();
    // The cause is left off on purpose: its message or stack may carry a token; only the scrubbed text goes on.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(scrubSecrets((e as Error).message));
  }
  return {
    adapters: names,
    healthPort,
    slackPort: ports.slack,
    async stop() {
      // Adapters first (they wait for in-flight replies), then the endpoint, then the database.
      for (const s of stops.reverse()) await s().catch((e) => logger.error({ err: scrubSecrets((e as Error).message) }, 'stop failed'));
      audit.close();
    },
  };
}
