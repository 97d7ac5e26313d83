// One zod schema for every setting (t3-env style): the YAML file given by --config or
// GPU_DOCTOR_CONFIG, plus secrets from the environment. A mistake fails start-up naming every bad key.
// Composed here, beside app.ts, from core's schemas (src/core/config.ts) and the wings' own
// (storage, Prometheus groups), so the core imports no wing.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import {
  ConfigError,
  describeIssues,
  digestSchema,
  FEEDBACK_WEEKLY_NAME,
  feedbackWeeklySchema,
  hostName,
  hostSchema,
  listenHost,
  OWNER_KEY,
  ownerSchema,
} from './core/config.js';
import { LOCALES } from './core/i18n.js';
import { ADMIN_ID_FORMS, SERVER_PLATFORMS, type ServerPlatform } from './core/platform.js';
import { prometheusGroupSchema } from './sources/prometheus/config.js';
import { storageSchema } from './storage/config.js';

export { ConfigError };

/** One entry per chat platform with a server (admins.<platform>, channels.<platform>), from src/core/platform.ts: a new platform needs no edit here. */
function perServerPlatform<T>(make: (platform: ServerPlatform) => T): { [P in ServerPlatform]: T } {
  return Object.fromEntries(SERVER_PLATFORMS.map((p) => [p, make(p)])) as { [P in ServerPlatform]: T };
}

/**
 * `host_groups:` entries. `source: ssh` holds SSH hosts exactly like `hosts:`; `source: prometheus` reads
 * its hosts from a Prometheus server (src/sources/prometheus/config.ts has its keys).
 */
export const hostGroupSchema = z.discriminatedUnion('source', [
  z.object({ name: hostName, source: z.literal('ssh'), hosts: z.array(hostSchema).default([]) }).strict(),
  prometheusGroupSchema,
]);

export const configSchema = z
  .object({
    data_dir: z.string().default('./data'),
    // Where the shared state lives: sqlite (files in data_dir, one bot) or Postgres shared by replicas (src/storage/config.ts).
    storage: storageSchema.default('sqlite'),
    ssh: z
      .object({
        config_file: z.string().optional(),
        known_hosts: z.string().optional(),
        identity_file: z.string().optional(),
        connect_timeout_ms: z.number().int().min(500).max(120000).default(8000),
        exec_timeout_ms: z.number().int().min(500).max(300000).default(15000),
        max_concurrent_connects: z.number().int().min(1).max(256).default(16),
      })
      .strict()
      .default({ connect_timeout_ms: 8000, exec_timeout_ms: 15000, max_concurrent_connects: 16 }),
    hosts: z.array(hostSchema).default([]),
    host_groups: z.array(hostGroupSchema).default([]),
    // Per chat platform (src/core/platform.ts): the user (or role) ids that are admins there.
    admins: z
      .object(perServerPlatform((p) => z.array(z.string().regex(ADMIN_ID_FORMS[p].pattern, ADMIN_ID_FORMS[p].says)).default([])))
      .strict()
      .default(perServerPlatform(() => [])),
    // unix user on the hosts -> the person in chat; `alice@gpu3` scopes an entry to one host.
    owners: z.record(z.string().regex(OWNER_KEY, 'a unix user (alice) or unix user@host (alice@gpu3)'), ownerSchema).default({}),
    channels: z
      .object({
        ...perServerPlatform(() => z.array(z.string()).optional()),
        // Direct messages with the bot. Unset: answered on a platform without a channel list, refused
        // on one with a list (a DM is outside "only these channels"). true/false decides for both.
        allow_dms: z.boolean().optional(),
      })
      .strict()
      .default({}),
    // The replies' language (en or zh): a channel listed here answers in its language whoever asks; elsewhere
    // the asker's own (Discord's client locale, Slack's user locale, LANG in the console), else `default`.
    locale: z
      .object({
        default: z.enum(LOCALES, 'a language: en or zh').default('en'),
        channels: z
          .record(z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'a channel ID (Slack C0123ABCD, Discord 1234567890)'), z.enum(LOCALES, 'a language: en or zh'))
          .default({}),
      })
      .strict()
      .default({ default: 'en', channels: {} }),
    watch: z
      .object({
        enabled: z.boolean().default(false),
        sample_interval_s: z.number().int().min(10).default(60),
        retention_days: z.number().int().min(1).max(365).default(7),
        min_slope_mib_per_hour: z.number().min(0).default(10),
        // A process rising steadily that would fill its card within this many hours is posted at once, not at the next digest (src/watch/early-alert.ts).
        early_alert_hours: z.number().positive('hours: more than 0').max(24, 'hours: at most 24 (slower rises are the digest’s)').default(1),
        // Threshold alerts (src/watch/threshold-alerts.ts), posted once per episode to the digests' channels.
        // Each rule is off unless named (`idle_held: {}` takes the defaults): a full card is how a training
        // job normally runs (the caching allocator keeps what it reserved), and a team with Alertmanager has its own.
        alerts: z
          .object({
            idle_held: z
              .object({
                min_gib: z.number().positive().default(1),
                max_util_pct: z.number().min(0).max(100).default(0),
                minutes: z
                  .number()
                  .int()
                  .min(1)
                  .max(7 * 24 * 60)
                  .default(60),
              })
              .strict()
              .optional(),
            card_full: z
              .object({
                pct: z.number().min(50).max(100).default(95),
                minutes: z
                  .number()
                  .int()
                  .min(1)
                  .max(7 * 24 * 60)
                  .default(30),
              })
              .strict()
              .optional(),
          })
          .strict()
          .default({}),
        digests: z.array(digestSchema).default([]),
      })
      .strict()
      .default({ enabled: false, sample_interval_s: 60, retention_days: 7, min_slope_mib_per_hour: 10, early_alert_hours: 1, alerts: {}, digests: [] }),
    // `/gpu fit` keeps max(margin_mib, margin_pct % of the card) free on every GPU on top of the job.
    fit: z
      .object({
        margin_mib: z
          .number()
          .int('a whole number of MiB')
          .min(0, 'MiB kept free on every GPU: 0-65536')
          .max(65536, 'MiB kept free on every GPU: 0-65536')
          .default(1024),
        margin_pct: z.number().min(0, 'percent of the card kept free: 0-50').max(50, 'percent of the card kept free: 0-50').default(5),
      })
      .strict()
      .default({ margin_mib: 1024, margin_pct: 5 }),
    notify: z
      .object({
        max_per_user: z
          .number()
          .int('a whole number')
          .min(1, 'open `/gpu notify` subscriptions per user: 1-100')
          .max(100, 'open `/gpu notify` subscriptions per user: 1-100')
          .default(3),
      })
      .strict()
      .default({ max_per_user: 3 }),
    // 👍 / 👎 on diagnoses. keep_logs (opt-in): a log no rule matched, or one voted 👎, is kept redacted
    // (tokens, keys, passwords, home paths, e-mails, IPs) in data_dir/feedback-logs for admins.
    feedback: z
      .object({
        keep_logs: z.boolean().default(false),
        retention_days: z.number().int('a whole number of days').min(1, 'days kept: 1-365').max(365, 'days kept: 1-365').default(30),
        // Caps on kept logs: per person per 24 h, of each log its last KiB, all kept logs together (over a cap: not kept, noted in the log).
        max_logs_per_user_per_day: z
          .number()
          .int('a whole number of logs')
          .min(1, 'logs kept per user per day: 1-10000')
          .max(10000, 'logs kept per user per day: 1-10000')
          .default(20),
        max_log_kib: z.number().int('a whole number of KiB').min(1, 'KiB kept of each log: 1-16384').max(16384, 'KiB kept of each log: 1-16384').default(256),
        max_kept_mib: z
          .number()
          .int('a whole number of MiB')
          .min(1, 'MiB of kept logs in all: 1-1048576')
          .max(1048576, 'MiB of kept logs in all: 1-1048576')
          .default(512),
        // The week's votes and kept logs (ids, rule, a redacted line), posted to the admins' channel.
        weekly: feedbackWeeklySchema.optional(),
      })
      .strict()
      .default({ keep_logs: false, retention_days: 30, max_logs_per_user_per_day: 20, max_log_kib: 256, max_kept_mib: 512 }),
    // /healthz and /metrics. Unset: HEALTH_PORT / HEALTH_HOST from the environment, else no endpoint and
    // 127.0.0.1 (this machine only). The Docker image sets HEALTH_HOST=0.0.0.0 so they are reachable from outside.
    http: z
      .object({ port: z.number().int().min(0).max(65535).optional(), host: listenHost.optional() })
      .strict()
      .default({}),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;

/** Every SSH host of the config: `hosts:` and the hosts of `source: ssh` groups. */
export function sshHostsOf(config: Config): z.infer<typeof hostSchema>[] {
  return [...config.hosts, ...config.host_groups.flatMap((g) => (g.source === 'ssh' ? g.hosts : []))];
}

/** The `fit` and `notify` sections as the commands use them. */
export function fitConfigOf(config: Config): { marginMiB: number; marginPct: number; maxNotifyPerUser: number } {
  return { marginMiB: config.fit.margin_mib, marginPct: config.fit.margin_pct, maxNotifyPerUser: config.notify.max_per_user };
}

/**
 * Where /healthz and /metrics listen: the config's http.port / http.host, else the environment's
 * HEALTH_PORT / HEALTH_HOST (validated by parseEnv); no port means no endpoint, no host means 127.0.0.1.
 */
export function httpEndpointOf(config: Config, env: NodeJS.ProcessEnv = process.env): { port: number; host: string } | undefined {
  const envPort = env.HEALTH_PORT ? Number(env.HEALTH_PORT) : undefined;
  const port = config.http.port ?? envPort;
  if (port === undefined || !Number.isInteger(port)) return undefined;
  return { port, host: config.http.host ?? (env.HEALTH_HOST || '127.0.0.1') };
}

export function parseConfig(doc: unknown, origin = 'config', lineOf?: (path: PropertyKey[]) => number | undefined): Config {
  const parsed = configSchema.safeParse(doc ?? {});
  if (!parsed.success) {
    throw new ConfigError(`${origin} is not valid:\n${describeIssues(configSchema, parsed.error.issues, lineOf).join('\n')}`);
  }
  const names = new Set<string>();
  const groupHosts = parsed.data.host_groups.flatMap((g) => g.hosts.map((h) => h.name));
  for (const name of [...parsed.data.hosts.map((h) => h.name), ...groupHosts]) {
    if (names.has(name)) throw new ConfigError(`${origin} is not valid:\n  hosts: "${name}" is listed twice`);
    names.add(name);
  }
  // The weekly feedback list quotes kept logs: never in a channel a digest posts to for everyone.
  const weekly = parsed.data.feedback.weekly;
  const line = (path: PropertyKey[]) => (lineOf?.(path) ? ` (line ${lineOf(path)})` : '');
  parsed.data.watch.digests.forEach((d, i) => {
    if (d.name === FEEDBACK_WEEKLY_NAME)
      throw new ConfigError(
        `${origin} is not valid:\n  watch.digests.${i}.name: "${FEEDBACK_WEEKLY_NAME}" is the weekly feedback list's name${line(['watch', 'digests', i, 'name'])}`,
      );
    if (weekly && d.platform === weekly.platform && d.channel === weekly.channel)
      throw new ConfigError(
        `${origin} is not valid:\n  feedback.weekly.channel: also watch.digests.${i}'s channel; the weekly list quotes kept logs: give it the admins' own channel${line(['feedback', 'weekly', 'channel'])}`,
      );
  });
  return parsed.data;
}

export interface LoadedConfig {
  config: Config;
  /** Where the file was, or null when running with defaults (localhost only). */
  file: string | null;
  baseDir: string;
}

export function loadConfig(file = process.env.GPU_DOCTOR_CONFIG): LoadedConfig {
  if (!file) return { config: parseConfig({}), file: null, baseDir: process.cwd() };
  const path = resolve(file);
  let source: string;
  try {
    source = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (e as Error).message.split('\n')[0]}`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length) {
    const e = doc.errors[0];
    const pos = lines.linePos(e.pos[0]);
    throw new ConfigError(`${path}: line ${pos.line}: not valid YAML (${e.code})`);
  }
  // The line of the value at a path, or of the nearest parent the document has.
  const lineOf = (p: PropertyKey[]): number | undefined => {
    for (let n = p.length; n >= 0; n--) {
      const node = doc.getIn(p.slice(0, n) as (string | number)[], true) as { range?: [number, number, number] } | undefined;
      if (node && typeof node === 'object' && node.range) return lines.linePos(node.range[0]).line;
    }
    return undefined;
  };
  return { config: parseConfig(doc.toJS(), path, lineOf), file: path, baseDir: dirname(path) };
}
