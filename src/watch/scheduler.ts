// Scheduled digests (croner: cron + time zone per configured digest) with the last run persisted in the
// store: a restart never posts a duplicate, and a digest missed while the bot was down posts once on start.
import { channelLocale, t, type Locale } from '../core/i18n.js';
import { Cron } from 'croner';
import type { Reply } from '../core/reply.js';
import type { RuleBase } from '../diagnose/rule-base.js';
import { dedupFindings, digestReply, type ChartOf, type DigestPeople } from './digest.js';
import { findingsFromStore, findingsOffThread, type FindingsResult } from './findings.js';
import type { WatchStore } from './store.js';
import type { DetectorOptions } from './types.js';

export interface DigestConfig {
  name: string;
  platform: 'slack' | 'discord' | 'console';
  channel: string;
  cron: string;
  timezone: string;
  /** Also message each new or worse finding's owner directly (config `dm_owners`, opt-in per digest). */
  dm_owners?: boolean;
}

/**
 * A post on the digests' clock that is not a leak digest (the weekly feedback list, src/feedback/weekly.ts):
 * its own reply, the same catch-up and the same last-run record (`name` in digest_runs).
 */
export interface ScheduledPost extends DigestConfig {
  compose(now: number): Reply | Promise<Reply>;
}

export type PostDigest = (digest: DigestConfig, reply: Reply) => Promise<void>;
/** What the adapters give the watch: a digest to its channel, or (kind 'dm') a direct message to the user id in `channel`. */
export type PostMessage = (target: PostTarget, reply: Reply) => Promise<void>;

const HOUR = 3_600_000;

/** Where a digest's findings come from: this thread (tests, small stores) or a worker thread. */
export type FindingsSource = (options: Partial<DetectorOptions>, now: number) => Promise<FindingsResult>;

// A promise that rejects (not a synchronous throw) when the store read fails, like the worker's.
export const inThread =
  (store: WatchStore): FindingsSource =>
  (options, now) =>
    new Promise((resolve) => resolve(findingsFromStore(store, options, now)));

/** A worker thread over the store's file; an in-memory store has no file to share, so it stays here. */
export const offThread = (store: WatchStore): FindingsSource =>
  store.file === ':memory:' ? inThread(store) : (options, now) => findingsOffThread(store.file, options, now);

/** One scheduled digest: new or worse findings only (state in the store), then the last run recorded. */
export async function scheduledDigest(
  store: WatchStore,
  digest: DigestConfig,
  rules: RuleBase | undefined,
  options: Partial<DetectorOptions>,
  now = Date.now(),
  source: FindingsSource = inThread(store),
  chartOf?: ChartOf,
  people: DigestPeople = {},
): Promise<Reply> {
  return (await scheduledDigestRun(store, digest, rules, options, now, source, chartOf, people)).reply;
}

/** The same, with the findings it reports (new or worse) and what was watched: the owner messages follow them. */
export async function scheduledDigestRun(
  store: WatchStore,
  digest: DigestConfig,
  rules: RuleBase | undefined,
  options: Partial<DetectorOptions>,
  now = Date.now(),
  source: FindingsSource = inThread(store),
  chartOf?: ChartOf,
  people: DigestPeople = {},
): Promise<{ reply: Reply; posted: Finding[]; watched: FindingsResult['watched'] }> {
  const { findings, watched } = await source(options, now);
  const { post, update } = dedupFindings(findings, store.reported(digest.name), now);
  store.saveReported(digest.name, update);
  // In the channel's language (the config's locale.channels, else locale.default).
  const loc = channelLocale(digest.channel);
  const reply = digestReply(post, watched, rules, t(loc, 'digest.scheduled.title', { name: digest.name }), chartOf, people, loc);
  if (!post.length && findings.length)
    reply.sections[0].text = t(loc, 'digest.scheduled.noneNew', { n: findings.length, hosts: watched.hosts, processes: watched.processes });
  return { reply, posted: post, watched };
}

export class DigestScheduler {
  private jobs: Cron[] = [];
  private inFlight = new Set<string>();
  private posts: ScheduledPost[] = [];
  /** Who the unix users are: digests name them, and `dm_owners` digests message them. */
  owners?: Pick<OwnersService, 'lookup'>;
  /** Where owner messages go (kind 'dm'); none set: no owner message is sent. */
  sendDirect?: PostMessage;

  constructor(
    private store: WatchStore,
    private digests: DigestConfig[],
    private post: PostDigest,
    private rules: RuleBase | undefined,
    private options: Partial<DetectorOptions> = {},
    private onError: (e: unknown) => void = () => {},
    private source: FindingsSource = inThread(store),
    /** The chart attached to a digest, drawn in the digest's own time zone. */
    private charts?: (d: DigestConfig, now: number) => ChartOf,
  ) {}

  /** One more schedule, before start(): posted through the same `post`, caught up and recorded like a digest. */
  add(post: ScheduledPost): void {
    this.posts.push(post);
  }

  /** Starts the cron jobs; posts each digest missed while down once. Returns the names caught up. */
  async start(now = Date.now()): Promise<string[]> {
    const caught: string[] = [];
    for (const d of [...this.digests, ...this.posts]) {
      const last = this.store.lastRun(d.name);
      if (last === null)
        this.store.setLastRun(d.name, now); // first start: nothing was missed
      else {
        const due = new Cron(d.cron, { timezone: d.timezone, paused: true }).nextRun(new Date(last));
        if (due && due.getTime() <= now) {
          await this.run(d, now);
          caught.push(d.name);
        }
      }
      this.jobs.push(new Cron(d.cron, { timezone: d.timezone, protect: true }, () => void this.run(d, Date.now())));
    }
    return caught;
  }

  /** Runs one digest unless it already ran for this slot (persisted last run guards duplicates). */
  async run(d: DigestConfig | ScheduledPost, now: number): Promise<boolean> {
    if (this.inFlight.has(d.name)) return false;
    const last = this.store.lastRun(d.name);
    if (last !== null && now - last < 30_000) return false;
    this.inFlight.add(d.name);
    try {
      this.store.setLastRun(d.name, now); // before posting: a crash mid-post never posts twice
      if ('compose' in d) {
        await this.post(d, await d.compose(now));
        return true;
      }
      const chartOf = this.charts?.(d, now);
      // Names, not pids; a platform mention (which may notify on Slack) only where the channel opted in to owner messages.
      const run = await scheduledDigestRun(this.store, d, this.rules, this.options, now, this.source, chartOf, {
        owners: this.owners,
        link: d.dm_owners === true,
      });
      // The findings are recorded as reported already: a channel that cannot be posted to does not
      // keep their owners from hearing of them.
      const posted = this.post(d, run.reply);
      if (d.dm_owners && this.owners && this.sendDirect) {
        await posted.catch(() => undefined);
        await messageOwners(d, run.posted, run.watched, this.owners, this.sendDirect, this.rules, chartOf, this.onError);
      }
      await posted;
      return true;
    } catch (e) {
      this.onError(e);
      return false;
    } finally {
      this.inFlight.delete(d.name);
    }
  }

  stop(): void {
    for (const j of this.jobs) j.stop();
    this.jobs = [];
  }
}

// ---- the WatchService the commands use (wired in src/app.ts when watch.enabled) ----

import type { ChartRequestOptions, FitConfig, HostsService, PostTarget, WatchService } from '../core/services.js';
import { messageOwners } from '../owners/owner-message.js';
import type { OwnersService } from '../owners/directory.js';
import type { Finding } from './types.js';
import { Mentions } from '../core/mention.js';
import { personOf } from '../owners/directory.js';
import { DEFAULT_FIT_SETTINGS, type GpuGrowth } from '../fleet/fit.js';
import { Notifier } from '../fleet/notify.js';
import { sparkline } from './digest.js';
import { findingChartFromStore, gpuChartReply } from './chart-store.js';
import { Sampler } from './sampler.js';
import { isHostSample, isProcessSample } from './types.js';

export interface WatchRuntimeConfig {
  sample_interval_s: number;
  retention_days: number;
  min_slope_mib_per_hour: number;
  digests: DigestConfig[];
}

export class WatchRuntime implements WatchService {
  readonly sampler: Sampler | null;
  readonly scheduler: DigestScheduler;
  private retentionTimer: NodeJS.Timeout | null = null;
  /** Set by the chat adapters; the schedules start once one is (so a digest missed while down has somewhere to go). */
  post: PostMessage = async () => {};
  private posterSet = false;
  private started = false;
  private scheduled: Promise<string[]> | null = null;

  setPoster(post: PostMessage): void {
    this.post = post;
    this.notify.setPoster(post);
    this.posterSet = true;
    void this.startSchedules();
  }

  /** The scheduler, once both start() ran and something can post: catch-up first, then the cron jobs. */
  private startSchedules(): Promise<string[]> {
    if (!this.started || !this.posterSet) return Promise.resolve([]);
    return (this.scheduled ??= this.scheduler.start().catch((e: unknown) => {
      this.onError(e);
      return [];
    }));
  }

  /** Who the unix users are (config owners and approved `/gpu whoami` claims): digests, owner messages and `/gpu watch` name them. */
  private owners?: Pick<OwnersService, 'lookup'>;
  setOwners(owners: Pick<OwnersService, 'lookup'> | undefined): void {
    this.owners = owners;
    this.scheduler.owners = owners;
  }
  private options: Partial<DetectorOptions>;
  private source: FindingsSource;
  private onError: (e: unknown) => void;
  /** `/gpu notify` subscriptions, checked after every sampler round. */
  readonly notify: Notifier;

  constructor(
    readonly store: WatchStore,
    private hosts: HostsService | undefined,
    private rules: RuleBase | undefined,
    private cfg: WatchRuntimeConfig,
    onError: (e: unknown) => void = () => {},
    fit: FitConfig = { ...DEFAULT_FIT_SETTINGS, maxNotifyPerUser: 3 },
  ) {
    this.onError = onError;
    this.options = { minSlopeMiBPerHour: cfg.min_slope_mib_per_hour, sampleIntervalSec: cfg.sample_interval_s };
    this.sampler = hosts ? new Sampler(hosts, store, cfg.sample_interval_s, onError) : null;
    this.notify = new Notifier(store, fit, hosts, (now) => this.gpuGrowth(now), onError);
    if (this.sampler) this.sampler.afterRound = (status, now) => this.notify.afterRound(status, now);
    // Digests read the store in a worker thread: seconds of work at 1000 hosts never delay a chat reply.
    this.source = offThread(store);
    const charts = (d: DigestConfig, now: number) => findingChartFromStore(store, { timeZone: d.timezone, sampleIntervalSec: cfg.sample_interval_s }, now);
    this.scheduler = new DigestScheduler(store, cfg.digests, (d, r) => this.post(d, r), rules, this.options, onError, this.source, charts);
    this.scheduler.sendDirect = (target, reply) => this.post(target, reply);
  }

  /** The time zone of the digest posted to this channel, else of the first digest, else the bot's own. */
  timeZoneFor(platform?: string, channel?: string): string {
    const d = this.cfg.digests.find((x) => x.platform === platform && x.channel === channel) ?? this.cfg.digests[0];
    return d?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
  }

  async start(): Promise<void> {
    this.sampler?.start();
    this.store.applyRetention(this.cfg.retention_days);
    this.retentionTimer = setInterval(() => this.store.applyRetention(this.cfg.retention_days), 3_600_000);
    this.retentionTimer.unref();
    this.started = true;
    await this.startSchedules();
  }

  async digestNow(locale?: Locale): Promise<Reply> {
    const now = Date.now();
    const { findings, watched } = await this.source(this.options, now);
    const chartOf = findingChartFromStore(this.store, { timeZone: this.timeZoneFor(), sampleIntervalSec: this.cfg.sample_interval_s }, now);
    return digestReply(findings, watched, this.rules, undefined, chartOf, { owners: this.owners }, locale);
  }

  private growthCache: { at: number; value: Promise<GpuGrowth[]> } | null = null;

  /**
   * Growth rates of growing GPU processes (leak and rank-0 findings), for `/gpu fit` and the notify check.
   * Computed off-thread like a digest, at most once per summary window (10 min): trends move slower.
   */
  gpuGrowth(now = Date.now()): Promise<GpuGrowth[]> {
    if (this.growthCache && now - this.growthCache.at >= 0 && now - this.growthCache.at < 10 * 60_000) return this.growthCache.value;
    const value = this.source(this.options, now).then(({ findings }) =>
      findings
        .filter((f) => (f.kind === 'leak' || f.kind === 'rank0_growth') && f.gpu !== undefined && f.slopeMiBPerHour > 0)
        .map((f) => ({
          host: f.host,
          gpu: f.gpu!,
          mibPerHour: f.slopeMiBPerHour,
          ...(f.pid !== undefined ? { pid: f.pid } : {}),
          ...(f.user ? { user: f.user } : {}),
        })),
    );
    this.growthCache = { at: now, value };
    // A failed computation is not kept: the next ask tries again.
    value.catch(() => {
      if (this.growthCache?.value === value) this.growthCache = null;
    });
    return value;
  }

  /** `/gpu chart HOST [GPU] [hours]`: one GPU's recent memory as a PNG, in the channel's time zone. */
  async chartHost(req: ChartRequestOptions): Promise<Reply> {
    const known = this.hosts ? (await this.hosts.list()).map((h) => h.name) : undefined;
    const style = { timeZone: this.timeZoneFor(req.platform, req.channel), sampleIntervalSec: this.cfg.sample_interval_s };
    return gpuChartReply(this.store, req, style, this.options, known);
  }

  watchHost(name: string, locale?: Locale): Promise<Reply> {
    // Synchronous over the store; a promise for the command interface, rejecting (not throwing) on a store error.
    return new Promise((resolve) => resolve(this.watchHostNow(name, locale)));
  }

  private watchHostNow(name: string, loc?: Locale): Reply {
    const since = Date.now() - 6 * HOUR;
    const series = new Map<string, number[]>();
    const ram: number[] = [];
    const people = new Mentions();
    // A GPU-level series stands for processes ps did not know (the last round saw them) or for none.
    const hidden = this.sampler?.hidden.get(name) ?? [];
    const gpuLabel = (gpu: number) => {
      const on = hidden.filter((p) => p.gpu === gpu);
      return on.length
        ? `GPU ${gpu} · pid ${on.map((p) => p.pid).join(',')} · ${[...new Set(on.map((p) => p.text))].join('; ')}`
        : t(loc, 'watch.noProcesses', { gpu });
    };
    for (const s of this.store.samplesSince(since, name)) {
      if (isHostSample(s)) ram.push((s.memTotalBytes - s.memAvailableBytes) / 2 ** 20);
      else {
        const key = isProcessSample(s)
          ? `GPU ${s.gpu} · pid ${s.pid} · ${personOf(people, this.owners, name, s.user) ?? s.user} · ${s.command.slice(0, 40)}`
          : gpuLabel(s.gpu);
        let a = series.get(key);
        if (!a) series.set(key, (a = []));
        a.push(isProcessSample(s) ? (s.processMiB ?? NaN) : s.gpuUsedMiB);
      }
    }
    if (!series.size && !ram.length)
      return { title: t(loc, 'watch.title', { host: name }), severity: 'info', sections: [{ text: t(loc, 'watch.noSamples', { host: name }) }] };
    const rows = [...series].map(([k, v]) => [
      k,
      String(Math.round(v[v.length - 1])),
      String(Math.round(Math.max(...v.filter(Number.isFinite)))),
      sparkline(v, 36),
    ]);
    if (ram.length) rows.push([t(loc, 'watch.hostRam'), String(Math.round(ram[ram.length - 1])), String(Math.round(Math.max(...ram))), sparkline(ram, 36)]);
    return {
      title: t(loc, 'watch.title6h', { host: name }),
      severity: 'info',
      sections: [{ table: { columns: [t(loc, 'watch.col.series'), t(loc, 'watch.col.now'), t(loc, 'watch.col.max'), t(loc, 'watch.col.last6h')], rows } }],
      ...(people.size ? { mentions: people.table() } : {}),
    };
  }

  stop(): void {
    this.sampler?.stop();
    this.scheduler.stop();
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.store.close();
  }
}
