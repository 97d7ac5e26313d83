// Wires the pieces together: config, rule base, services, command registry. Adapters get the result.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fitConfigOf, loadConfig, type Config, type LoadedConfig } from './config.js';
import { resolvePath as resolveDataPath } from './core/config.js';
import { configureLocales, resolveLocale } from './core/i18n.js';
import { CommandRegistry } from './core/registry.js';
import { scrub } from './core/secret-scrub.js';
import type { Services } from './core/services.js';
import type { HostEntry, RegistryStore } from './hosts/registry.js';
import type { AuditSink } from './ops/audit.js';
import type { FeedbackStorage, FeedbackStoreOptions } from './feedback/storage.js';
import type { SubscriptionStorage } from './fleet/subscriptions.js';
import type { ClaimStorage } from './owners/claims.js';
import type { WatchState } from './watch/state.js';
import type { SilenceStorage } from './watch/silences.js';
import { loadRuleBase } from './diagnose/rule-base.js';
import { allCommands } from '../commands/index.js';

export interface App {
  loaded: LoadedConfig;
  /** Postgres shared by replicas, when the config's `storage:` names it (else everything is SQLite in data_dir). */
  storage?: import('./storage/postgres/index.js').SharedStorage;
  services: Services;
  registry: CommandRegistry;
  /** The audit trail of the chosen backend, opened when a chat adapter starts (failed writes go to `onError`). */
  audit(onError: (e: unknown) => void): AuditSink;
  close(): Promise<void>;
}

/**
 * The one choice of storage backend, for the bot and for the CLI: Postgres shared by replicas when the
 * config's `storage:` names it (migrations applied now), else SQLite files in data_dir. Every store the bot
 * or a CLI command opens comes from here: nothing else in src/ decides the backend.
 */
export interface Stores {
  shared?: import('./storage/postgres/index.js').SharedStorage;
  registry(configHosts: HostEntry[]): RegistryStore;
  audit(onError: (e: unknown) => void): AuditSink;
  /** 👍 / 👎 (kept log files in data_dir/feedback-logs on either backend). */
  feedback(options: FeedbackStoreOptions): FeedbackStorage;
  /** The same, or where it would be when nothing was ever recorded (no SQLite file yet): a reader creates nothing just to say so. */
  recordedFeedback(options: FeedbackStoreOptions): { store: FeedbackStorage } | { noneAt: string };
  /** `/gpu whoami` claims. */
  claims(): Promise<ClaimStorage>;
  /** The leak watch's samples, digest runs and (Postgres) sampling leases. */
  watch(): Promise<WatchState>;
  /** `/gpu silence`. */
  silences(): Promise<SilenceStorage>;
  /** `/gpu notify` subscriptions. */
  subscriptions(): Promise<SubscriptionStorage>;
  close(): Promise<void>;
}

/** The config's `feedback` section as the stores take it. */
export function feedbackOptionsOf(config: Config): FeedbackStoreOptions {
  const fb = config.feedback;
  return {
    keepLogs: fb.keep_logs,
    retentionDays: fb.retention_days,
    maxLogsPerUserPerDay: fb.max_logs_per_user_per_day,
    maxLogBytes: fb.max_log_kib * 1024,
    maxKeptBytes: fb.max_kept_mib * 1024 * 1024,
  };
}

/** `poolMax`: Postgres connections at most (a one-shot CLI command needs one), else the config's. */
export async function openStores(loaded: LoadedConfig, o: { poolMax?: number } = {}): Promise<Stores> {
  const { storageOf } = await import('./storage/config.js');
  const choice = storageOf(loaded.config.storage);
  const dataDir = resolveDataPath(loaded.config.data_dir, loaded.baseDir);
  const logsDir = join(dataDir, 'feedback-logs');
  if (choice.kind === 'postgres') {
    const shared = await (await import('./storage/postgres/index.js')).openSharedStorage({ ...choice, ...(o.poolMax ? { poolMax: o.poolMax } : {}) });
    const feedback = (options: FeedbackStoreOptions) => shared.feedback({ ...options, logsDir });
    return {
      shared,
      registry: (configHosts) => shared.registry(configHosts),
      audit: (onError) => shared.audit(onError),
      feedback,
      recordedFeedback: (options) => ({ store: feedback(options) }),
      claims: () => Promise.resolve(shared.claims()),
      watch: () => Promise.resolve(shared.watch),
      silences: async () => new (await import('./storage/postgres/silences.js')).PgSilenceStore(shared.pool),
      subscriptions: async () => new (await import('./storage/postgres/subscriptions.js')).PgSubscriptionStore(shared.pool),
      close: () => shared.close(),
    };
  }
  const { HostRegistry } = await import('./storage/sqlite/registry.js');
  const { AuditStore } = await import('./storage/sqlite/audit.js');
  const { FeedbackStore } = await import('./storage/sqlite/feedback.js');
  const feedback = (options: FeedbackStoreOptions) => FeedbackStore.inDataDir(dataDir, options);
  return {
    registry: (configHosts) => new HostRegistry(dataDir, configHosts),
    audit: (onError) => AuditStore.inDataDir(dataDir, onError),
    feedback,
    recordedFeedback: (options) => (existsSync(FeedbackStore.fileIn(dataDir)) ? { store: feedback(options) } : { noneAt: FeedbackStore.fileIn(dataDir) }),
    // data_dir/gpu-doctor.sqlite (claims, silences beside the registry) and data_dir/watch.sqlite (samples, subscriptions).
    claims: async () => (await import('./storage/sqlite/claims.js')).ClaimStore.inDataDir(dataDir),
    watch: async () => (await import('./storage/sqlite/watch.js')).WatchStore.inDataDir(dataDir),
    silences: async () => (await import('./storage/sqlite/silences.js')).SilenceStore.inDataDir(dataDir),
    subscriptions: async () => (await import('./storage/sqlite/subscriptions.js')).SubscriptionStore.inDataDir(dataDir),
    close: async () => {},
  };
}

/** A line on stderr, scrubbed of every credential the bot holds (an error from a source may echo one). */
const logLine = (line: string) => process.stderr.write(`${scrub(line)}\n`);

export async function createApp(configFile?: string): Promise<App> {
  const loaded = loadConfig(configFile);
  // What the bot sends unasked (scheduled digests, direct messages) speaks the config's locale: too.
  configureLocales(loaded.config.locale);
  const services: Services = { rules: await loadRuleBase(), fit: fitConfigOf(loaded.config) };
  const closers: (() => Promise<void> | void)[] = [];
  // `storage:` Postgres: migrations applied now; the registry, leak watch and audit trail are then shared by replicas.
  const stores = await openStores(loaded);
  const storage = stores.shared;
  closers.push(() => stores.close());
  const { createHostsService } = await import('./hosts/service.js');
  // The registry and trusted keys: Postgres shared by replicas, else data_dir/gpu-doctor.sqlite.
  const hosts = createHostsService(loaded.config, loaded.baseDir, (configHosts) => stores.registry(configHosts));
  services.hosts = hosts;
  closers.push(() => hosts.close());
  // unix user -> person: the config's owners and approved `/gpu whoami` claims (the registry's database, or Postgres).
  const { ownersFromConfig } = await import('./owners/wire.js');
  const claims = await stores.claims();
  const owners = ownersFromConfig(loaded.config, claims);
  services.owners = owners.service;
  closers.push(owners.close);
  // The approved claims before the first digest or command names anyone (a failed read is tried again at the next).
  await owners.service.refresh?.().catch((e: unknown) => logLine(`owners: ${(e as Error).message ?? String(e)}`));
  // 👍 / 👎 on diagnoses, in data_dir/feedback.sqlite or Postgres (and, opted in, redacted logs in data_dir/feedback-logs).
  const feedback = stores.feedback(feedbackOptionsOf(loaded.config));
  services.feedback = feedback;
  closers.push(() => feedback.close());
  // The weekly feedback list for the admins' channel: one more schedule of the digests' scheduler.
  const weeklyCfg = loaded.config.feedback.weekly;
  const weekly = weeklyCfg
    ? (await import('./feedback/weekly.js')).feedbackWeeklyPost(feedback, weeklyCfg, resolveLocale(loaded.config.locale, weeklyCfg.channel, undefined))
    : undefined;
  const onScheduleError = (e: unknown) => logLine(`schedule: ${(e as Error).message ?? String(e)}`);
  // The leak watch's state (samples, digest runs), where the schedules or the watch need it:
  // Postgres shared by replicas (slots claimed, hosts leased), else data_dir/watch.sqlite. The one choice of backend.
  const watchState = weekly || loaded.config.watch.enabled ? await stores.watch() : undefined;
  if (weekly && watchState && !loaded.config.watch.enabled) {
    const { FeedbackWeeklySchedule } = await import('./feedback/weekly.js');
    const schedule = new FeedbackWeeklySchedule(watchState, weekly, onScheduleError);
    services.schedules = schedule;
    closers.push(() => schedule.stop());
  }
  if (watchState && loaded.config.watch.enabled) {
    const { WatchRuntime } = await import('./watch/runtime.js');
    const watch = new WatchRuntime(
      watchState,
      hosts,
      services.rules,
      loaded.config.watch,
      (e) => logLine(`watch: ${(e as Error).message ?? String(e)}`),
      services.fit,
    );
    services.watch = watch;
    if (weekly) watch.scheduler.add(weekly);
    watch.setOwners(services.owners);
    // `/gpu silence`: in Postgres with the rest of the shared state, else in data_dir's registry database.
    watch.setSilences(await stores.silences());
    // `/gpu notify` subscriptions: in Postgres with the rest of the shared state, else in data_dir's watch database.
    watch.setSubscriptions(await stores.subscriptions());
    // Sources that keep history fill the store since its last sample, before the first digest. Into
    // Postgres too: replicas starting together write the same rows (an upsert on the row's key).
    const filled = await hosts.backfillHistory(watchState);
    for (const w of filled.warnings) logLine(`watch: ${w}`);
    await watch.start();
    closers.push(async () => {
      await watch.release().catch(() => undefined);
      watch.stop();
    });
  }
  const registry = new CommandRegistry(allCommands());
  return {
    loaded,
    ...(storage ? { storage } : {}),
    services,
    registry,
    audit: (onError) => stores.audit(onError),
    async close() {
      for (const c of closers.reverse()) await c();
    },
  };
}
