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
  const run = digestOf(findings, watched, store.reported(digest.name), digest, rules, now, chartOf, people);
  store.saveReported(digest.name, run.update);
  return run;
}

/** A digest of these findings: the new or worse ones against what was reported, and what to record as reported. */
function digestOf(
  findings: Finding[],
  watched: FindingsResult['watched'],
  reported: Map<string, ReportedState>,
  digest: DigestConfig,
  rules: RuleBase | undefined,
  now: number,
  chartOf?: ChartOf,
  people: DigestPeople = {},
): { reply: Reply; posted: Finding[]; watched: FindingsResult['watched']; update: Map<string, ReportedState> } {
  const { post, update } = dedupFindings(findings, reported, now);
  // In the channel's language (the config's locale.channels, else locale.default).
  const loc = channelLocale(digest.channel);
  const reply = digestReply(post, watched, rules, t(loc, 'digest.scheduled.title', { name: digest.name }), chartOf, people, loc);
  if (!post.length && findings.length)
    reply.sections[0].text = t(loc, 'digest.scheduled.noneNew', { n: findings.length, hosts: watched.hosts, processes: watched.processes });
  return { reply, posted: post, watched, update };
}

/** The findings a digest (and, where it messages owners, their messages) will chart: found by composing it once without charts. */
function chartedBy(
  findings: Finding[],
  watched: FindingsResult['watched'],
  reported: Map<string, ReportedState>,
  digest: DigestConfig,
  rules: RuleBase | undefined,
  now: number,
  people: DigestPeople,
): Finding[] {
  const charted: Finding[] = [];
  const dry = digestOf(findings, watched, reported, digest, rules, now, (f) => void charted.push(f), people);
  return digest.dm_owners ? [...charted, ...dry.posted.slice(0, 20)] : charted;
}

/** The slot a digest is due for at `now`: its latest scheduled time (ms), with a quarter second for a timer that fires early. */
export function latestSlot(d: Pick<DigestConfig, 'cron' | 'timezone'>, now: number): number | null {
  const job = new Cron(d.cron, { timezone: d.timezone, paused: true });
  const prev = job.previousRuns(1, new Date(now + 250))[0];
  job.stop();
  return prev ? prev.getTime() : null;
}

export class DigestScheduler {
  private jobs: Cron[] = [];
  private sweeper: NodeJS.Timeout | null = null;
  /**
   * Digest slots shared by replicas (Postgres), set before start(): each slot is claimed by one replica
   * and posted by it; a slot whose holder died is taken over when its claim expires.
   */
  slots?: DigestSlots;
  /**
   * Charts whose samples must be read first (Postgres): given the findings a digest will chart, the chart
   * source for them. Used instead of `charts` when set.
   */
  chartsFor?: (d: DigestConfig, now: number, charted: Finding[]) => Promise<ChartOf | undefined>;
  private inFlight = new Set<string>();
  private posts: ScheduledPost[] = [];
  /** Who the unix users are: digests name them, and `dm_owners` digests message them. */
  owners?: Pick<OwnersService, 'lookup' | 'refresh'>;
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
    if (this.slots) return this.startShared(this.slots, now);
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
      await this.owners?.refresh?.().catch(() => undefined);
      // Names, not pids; a platform mention (which may notify on Slack) only where the channel opted in to owner messages.
      const people = { owners: this.owners, link: d.dm_owners === true };
      let chartOf = this.charts?.(d, now);
      let run: Awaited<ReturnType<typeof scheduledDigestRun>>;
      if (this.chartsFor) {
        // Charts drawn first (in a child process), for the findings the digest and its owner messages will show.
        const { findings, watched } = await this.source(this.options, now);
        const reported = this.store.reported(d.name);
        chartOf = await this.chartsFor(d, now, chartedBy(findings, watched, reported, d, this.rules, now, people));
        const composed = digestOf(findings, watched, reported, d, this.rules, now, chartOf, people);
        this.store.saveReported(d.name, composed.update);
        run = composed;
      } else run = await scheduledDigestRun(this.store, d, this.rules, this.options, now, this.source, chartOf, people);
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

  /** start() with shared slots: every cron tick, and every third of a claim's life, claims what is due. */
  private async startShared(slots: DigestSlots, now: number): Promise<string[]> {
    const all = [...this.digests, ...this.posts];
    for (const d of all) {
      const slot = latestSlot(d, now);
      if (slot !== null) await slots.seed(d.name, slot);
      this.jobs.push(new Cron(d.cron, { timezone: d.timezone, protect: true }, () => void this.sweep(d)));
    }
    const caught: string[] = [];
    for (const d of all) if (await this.sweep(d, now)) caught.push(d.name);
    this.sweeper = setInterval(
      () => {
        for (const d of all) void this.sweep(d);
      },
      Math.max(500, Math.floor(slots.claimTtlMs / 3)),
    );
    this.sweeper.unref();
    return caught;
  }

  /**
   * Posts what this replica can claim of `d`: slots abandoned by a replica that died holding them, then
   * the latest due slot. True when one was posted here. Errors go to onError (a sweep never throws).
   */
  async sweep(d: DigestConfig | ScheduledPost, now = Date.now()): Promise<boolean> {
    const slots = this.slots;
    if (!slots || this.inFlight.has(d.name)) return false;
    this.inFlight.add(d.name);
    try {
      let ran = false;
      for (const slot of await slots.abandoned(d.name)) if (await slots.claim(d.name, slot)) ran = (await this.runClaimed(slots, d, slot, Date.now())) || ran;
      const latest = latestSlot(d, now);
      if (latest !== null && (await slots.claim(d.name, latest))) ran = (await this.runClaimed(slots, d, latest, now)) || ran;
      return ran;
    } catch (e) {
      this.onError(e);
      return false;
    } finally {
      this.inFlight.delete(d.name);
    }
  }

  /**
   * Runs a slot this replica claimed: the claim is renewed while the digest is computed, checked once
   * more just before posting (a replica that stalled past its claim leaves the post to the one that took
   * over), and marked posted after. What was reported is saved only after the post, so a replica that
   * dies mid-digest leaves the retry the same findings to report.
   */
  private async runClaimed(slots: DigestSlots, d: DigestConfig | ScheduledPost, slot: number, now: number): Promise<boolean> {
    const renewal = setInterval(() => void slots.renew(d.name, slot).catch((e: unknown) => this.onError(e)), Math.max(200, Math.floor(slots.claimTtlMs / 3)));
    try {
      if ('compose' in d) {
        const reply = await d.compose(now);
        if (!(await slots.renew(d.name, slot))) return false;
        await this.post(d, reply);
        await slots.done(d.name, slot, 'posted');
        return true;
      }
      const { findings, watched } = await this.source(this.options, now);
      const reported = await slots.reported(d.name);
      // Owner names as any replica approved them; a failed read keeps the last ones.
      await this.owners?.refresh?.().catch(() => undefined);
      const people = { owners: this.owners, link: d.dm_owners === true };
      let chartOf = this.charts?.(d, now);
      // Which findings the digest (and the owner messages) will chart, then their charts, then the digest.
      if (this.chartsFor) chartOf = await this.chartsFor(d, now, chartedBy(findings, watched, reported, d, this.rules, now, people));
      const run = digestOf(findings, watched, reported, d, this.rules, now, chartOf, people);
      if (!(await slots.renew(d.name, slot))) return false;
      const posted = this.post(d, run.reply);
      if (d.dm_owners && this.owners && this.sendDirect) {
        await posted.catch(() => undefined);
        await messageOwners(d, run.posted, run.watched, this.owners, this.sendDirect, this.rules, chartOf, this.onError);
      }
      await posted;
      await slots.saveReported(d.name, run.update);
      await slots.done(d.name, slot, 'posted');
      return true;
    } catch (e) {
      // Not retried (as with SQLite): a channel that cannot be posted to would fail again. Only a replica
      // that dies holding the slot leaves it to be taken over.
      await slots.done(d.name, slot, 'failed', (e as Error).message ?? String(e)).catch(() => undefined);
      this.onError(e);
      return false;
    } finally {
      clearInterval(renewal);
    }
  }

  stop(): void {
    for (const j of this.jobs) j.stop();
    this.jobs = [];
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }
}

// ---- the WatchService the commands use (wired in src/app.ts when watch.enabled) ----

import type { ChartRequestOptions, FitConfig, HostsService, PostTarget, WatchService } from '../core/services.js';
import { messageOwners } from '../owners/owner-message.js';
import type { OwnersService } from '../owners/directory.js';
import type { Finding } from './types.js';
import type { ReportedState } from './digest.js';
import type { DigestSlots, PgWatchState } from '../storage/postgres/watch.js';
import { Mentions } from '../core/mention.js';
import { personOf } from '../owners/directory.js';
import { DEFAULT_FIT_SETTINGS, type GpuGrowth } from '../fleet/fit.js';
import { Notifier } from '../fleet/notify.js';
import { sparkline } from './digest.js';
import { DEFAULT_CHART_BUDGET, findingChartsInChild, gpuChartInChild, type ChartBudget, type SampleSource } from './chart-render.js';
import { packSamples } from './chart-samples.js';
import { Sampler } from './sampler.js';
import { isHostSample, isProcessSample, type Sample } from './types.js';
import { maxOf } from '../core/extremes.js';

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
  private owners?: Pick<OwnersService, 'lookup' | 'refresh'>;
  setOwners(owners: Pick<OwnersService, 'lookup' | 'refresh'> | undefined): void {
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
    /**
     * Postgres shared by replicas (config `storage:`): samples, subscriptions, digest slots and sampling
     * leases live there instead of `store`, and this replica samples only the hosts whose lease it holds.
     */
    private shared?: PgWatchState,
  ) {
    this.onError = onError;
    this.options = { minSlopeMiBPerHour: cfg.min_slope_mib_per_hour, sampleIntervalSec: cfg.sample_interval_s };
    this.sampler = hosts ? new Sampler(hosts, shared ? { insertPaced: (s) => shared.insert(s) } : store, cfg.sample_interval_s, onError) : null;
    if (this.sampler && shared) this.sampler.pick = (names) => (Date.now() < this.heldUntil ? names.filter((n) => this.held.has(n)) : []);
    this.notify = new Notifier(shared ?? store, fit, hosts, (now) => this.gpuGrowth(now), onError);
    if (this.sampler) this.sampler.afterRound = (status, now) => this.notify.afterRound(status, now);
    // Digests read the store in a worker thread: seconds of work at 1000 hosts never delay a chat reply.
    // From Postgres they are read in batches of rows, each batch a yield to the event loop.
    this.source = shared ? (o, now) => shared.findings(o, now) : offThread(store);
    this.scheduler = new DigestScheduler(store, cfg.digests, (d, r) => this.post(d, r), rules, this.options, onError, this.source);
    if (shared) this.scheduler.slots = shared;
    // Charts are read and drawn in a child process (chart-render.ts): never on this thread, and a renderer crash ends only the child.
    this.scheduler.chartsFor = (d, now, charted) => this.chartsOf(charted, { timeZone: d.timezone, sampleIntervalSec: cfg.sample_interval_s }, now);
    this.scheduler.sendDirect = (target, reply) => this.post(target, reply);
  }

  private leaseTimer: NodeJS.Timeout | null = null;
  /** Hosts whose sampling lease this replica holds, and until when (its own clock) it surely holds them. */
  private held = new Set<string>();
  private heldUntil = 0;

  /** Takes or renews the sampling leases of every registered host it can; a host newly held is sampled at once. */
  private async renewLeases(): Promise<void> {
    const shared = this.shared;
    if (!shared || !this.hosts) return;
    const t0 = Date.now();
    const held = await shared.leaseHosts((await this.hosts.list()).map((h) => h.name));
    const gained = [...held].some((h) => !this.held.has(h));
    this.held = held;
    this.heldUntil = t0 + shared.claimTtlMs;
    if (gained && this.started) void this.sampler?.tick();
  }

  /** The time zone of the digest posted to this channel, else of the first digest, else the bot's own. */
  timeZoneFor(platform?: string, channel?: string): string {
    const d = this.cfg.digests.find((x) => x.platform === platform && x.channel === channel) ?? this.cfg.digests[0];
    return d?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
  }

  async start(): Promise<void> {
    const shared = this.shared;
    if (shared) {
      // Leases first, renewed every third of their life: a replica that stops renewing loses its hosts to another within one lease.
      await this.renewLeases().catch((e: unknown) => this.onError(e));
      this.leaseTimer = setInterval(() => void this.renewLeases().catch((e: unknown) => this.onError(e)), Math.max(200, Math.floor(shared.claimTtlMs / 3)));
      this.leaseTimer.unref();
    }
    this.sampler?.start();
    const retention = () =>
      shared ? void shared.applyRetention(this.cfg.retention_days).catch((e: unknown) => this.onError(e)) : this.store.applyRetention(this.cfg.retention_days);
    retention();
    this.retentionTimer = setInterval(retention, 3_600_000);
    this.retentionTimer.unref();
    this.started = true;
    await this.startSchedules();
  }

  async digestNow(locale?: Locale): Promise<Reply> {
    const now = Date.now();
    const { findings, watched } = await this.source(this.options, now);
    const style = { timeZone: this.timeZoneFor(), sampleIntervalSec: this.cfg.sample_interval_s };
    const charted: Finding[] = [];
    digestReply(findings, watched, this.rules, undefined, (f) => void charted.push(f), { owners: this.owners }, locale);
    const chartOf = await this.chartsOf(charted, style, now);
    return digestReply(findings, watched, this.rules, undefined, chartOf, { owners: this.owners }, locale);
  }

  /**
   * Where a chart child reads samples: the SQLite file (its own connection); from Postgres or an
   * in-memory store, these hosts' samples since `sinceMs` read here and sent to it as columns.
   */
  private async sampleSource(hosts: string[], sinceMs: number): Promise<SampleSource> {
    if (!this.shared && this.store.file !== ':memory:') return { file: this.store.file };
    const samples: Sample[] = [];
    for (const h of new Set(hosts))
      for (const s of this.shared ? await this.shared.samplesSince(sinceMs, h) : this.store.samplesSince(sinceMs, h)) samples.push(s);
    return { packed: await packSamples(samples) };
  }

  /** Charts of these findings, drawn in a child process (20 hosts at most, the detector's 72 h at most). */
  private async chartsOf(charted: Finding[], style: { timeZone: string; sampleIntervalSec: number }, now: number): Promise<ChartOf | undefined> {
    if (!charted.length) return undefined;
    const hosts = new Set([...new Set(charted.map((f) => f.host))].slice(0, 20));
    const source = await this.sampleSource([...hosts], now - 72 * HOUR);
    return findingChartsInChild(
      source,
      charted.filter((f) => hosts.has(f.host)),
      style,
      now,
      this.onError,
    );
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
    // The chart reads the detector's history (72 h by default) of one host; all of it is done in a child process.
    const now = Date.now();
    const source = await this.sampleSource([req.host], now - Math.max(req.hours, 72) * HOUR);
    return gpuChartInChild(source, req, style, this.options, known, now, this.chartBudget);
  }

  /** Time and heap budget of each chart's child process. */
  chartBudget: ChartBudget = DEFAULT_CHART_BUDGET;

  async watchHost(name: string, locale?: Locale): Promise<Reply> {
    const since = Date.now() - 6 * HOUR;
    if (this.shared) return this.watchHostNow(name, await this.shared.samplesSince(since, name), locale);
    return this.watchHostNow(name, this.store.samplesSince(since, name), locale);
  }

  /** A clean stop with Postgres: this replica's sampling leases are given back, so another takes its hosts over at once. */
  async release(): Promise<void> {
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.leaseTimer = null;
    this.heldUntil = 0;
    await this.shared?.releaseLeases();
  }

  private watchHostNow(name: string, samples: Iterable<Sample>, loc?: Locale): Reply {
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
    for (const s of samples) {
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
    const rows = [...series].map(([k, v]) => [k, String(Math.round(v[v.length - 1])), String(Math.round(maxOf(v.filter(Number.isFinite)))), sparkline(v, 36)]);
    if (ram.length) rows.push([t(loc, 'watch.hostRam'), String(Math.round(ram[ram.length - 1])), String(Math.round(maxOf(ram))), sparkline(ram, 36)]);
    return {
      title: t(loc, 'watch.title6h', { host: name }),
      severity: 'info',
      sections: [{ table: { columns: [t(loc, 'watch.col.series'), t(loc, 'watch.col.now'), t(loc, 'watch.col.max'), t(loc, 'watch.col.last6h')], rows } }],
      ...(people.size ? { mentions: people.table() } : {}),
    };
  }

  stop(): void {
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.sampler?.stop();
    this.scheduler.stop();
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.store.close();
  }
}
