// The leak watch as the commands and adapters see it (the WatchService, wired in src/app.ts when
// watch.enabled): the sampler, the digest schedules, `/gpu notify`, charts and `/gpu watch`, over the
// storage port (src/watch/state.ts). Which backend holds the state is app.ts's choice, made once.
import type { Locale } from '../core/i18n.js';
import { t } from '../core/i18n.js';
import type { Reply } from '../core/reply.js';
import type { ChartRequestOptions, FitConfig, HostsService, WatchService } from '../core/services.js';
import { Mentions } from '../core/mention.js';
import { maxOf } from '../core/extremes.js';
import type { RuleBase } from '../diagnose/rule-base.js';
import type { OwnersService } from '../owners/directory.js';
import { personOf } from '../owners/directory.js';
import { DEFAULT_FIT_SETTINGS, type GpuGrowth } from '../fleet/fit.js';
import { Notifier } from '../fleet/notify.js';
import type { SubscriptionStorage } from '../fleet/subscriptions.js';
import { DEFAULT_CHART_BUDGET, findingChartsInChild, gpuChartInChild, keepChartChildReady, type ChartBudget } from './chart-render.js';
import { digestReply, sparkline, type ChartOf } from './digest.js';
import { findingsOf } from './findings.js';
import { DigestScheduler, type DigestConfig, type FindingsSource, type PostMessage } from './scheduler.js';
import { coverageLine, EarlyWatch, postEarlyAlerts } from './early-alert.js';
import { postThresholdAlerts, ThresholdWatch, type ThresholdConfig } from './threshold-alerts.js';
import { Holders, Silences, type SilenceStorage } from './silences.js';
import { toMs } from './series.js';
import { Sampler } from './sampler.js';
import type { WatchState } from './state.js';
import { isHostSample, isProcessSample, type DetectorOptions, type Finding, type Sample } from './types.js';

const HOUR = 3_600_000;

export interface WatchRuntimeConfig {
  sample_interval_s: number;
  retention_days: number;
  min_slope_mib_per_hour: number;
  digests: DigestConfig[];
  /** Early alert horizon in hours (config `watch.early_alert_hours`, default 1). */
  early_alert_hours?: number;
  /** Threshold alerts (config `watch.alerts`): each rule off where absent. */
  alerts?: ThresholdConfig;
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
    this.notify?.setPoster(post);
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
  /** `/gpu notify` subscriptions (set by app.ts with the backend's store), checked after every sampler round. */
  notify?: Notifier;
  private subscriptionStore?: SubscriptionStorage;
  private fit: FitConfig;

  setSubscriptions(store: SubscriptionStorage): void {
    this.subscriptionStore = store;
    this.notify = new Notifier(store, this.fit, this.hosts, (now) => this.gpuGrowth(now), this.onError);
    if (this.posterSet) this.notify.setPoster(this.post);
  }
  /** Processes rising toward a full card (src/watch/early-alert.ts): fed by each round, checked after it. */
  readonly early: EarlyWatch;
  /** Idle-holder and full-card episodes (src/watch/threshold-alerts.ts): fed by each round, checked after it. */
  readonly thresholds: ThresholdWatch;
  /** Who had a process where in the last round: who may silence a host or GPU without being an admin. */
  private holders = new Holders();
  /** `/gpu silence` (set by app.ts with the backend's store): silenced hosts and GPUs get no threshold or early alert. */
  silences?: Silences;
  private silenceStore?: SilenceStorage;

  setSilences(store: SilenceStorage): void {
    this.silenceStore = store;
    this.silences = new Silences(store, this.holders, () => this.owners);
  }

  /** What a round's samples tell the watches kept in memory: the early alert's window, the threshold episodes, who holds what. */
  observe(samples: Sample[]): void {
    this.early.add(samples);
    this.thresholds.add(samples);
    this.holders.add(samples);
  }

  /** Before a round's alerts: the silences in force now (another replica's too); on a failed read, the last ones read. */
  private async silencedNow(now: number): Promise<(host: string, gpu: number) => boolean> {
    const s = this.silences;
    if (!s) return () => false;
    await s.refresh(now).catch((e: unknown) => this.onError(e));
    return (host, gpu) => s.silenced(host, gpu, now);
  }

  constructor(
    /** Samples, digest runs and (with replicas) sampling leases: src/watch/state.ts. */
    readonly store: WatchState,
    private hosts: HostsService | undefined,
    private rules: RuleBase | undefined,
    private cfg: WatchRuntimeConfig,
    onError: (e: unknown) => void = () => {},
    fit: FitConfig = { ...DEFAULT_FIT_SETTINGS, maxNotifyPerUser: 3 },
  ) {
    this.onError = onError;
    this.fit = fit;
    this.options = { minSlopeMiBPerHour: cfg.min_slope_mib_per_hour, sampleIntervalSec: cfg.sample_interval_s };
    this.early = new EarlyWatch({ withinHours: cfg.early_alert_hours ?? 1 });
    this.thresholds = new ThresholdWatch(cfg.alerts ?? {}, 3 * cfg.sample_interval_s * 1000);
    // A round's samples go to the store, to the early alert's recent window (memory: the last hour) and to the threshold episodes.
    const sink = {
      insertPaced: (samples: Sample[]) => {
        this.observe(samples);
        return store.insertPaced(samples);
      },
    };
    this.sampler = hosts ? new Sampler(hosts, sink, cfg.sample_interval_s, onError) : null;
    // With sampling leases this process samples only the hosts whose lease it surely holds.
    if (this.sampler && store.leases) this.sampler.pick = (names) => (Date.now() < this.heldUntil ? names.filter((n) => this.held.has(n)) : []);
    if (this.sampler)
      this.sampler.afterRound = (status, now) => Promise.all([this.notify?.afterRound(status, now), this.earlyAlerts(now), this.thresholdAlerts(now)]);
    // Digests never delay a chat reply: the backend computes them off this thread (SQLite: a worker
    // thread over its file) or reads in batches, each a yield to the event loop (Postgres).
    this.source = (o, now) => findingsOf(store, o, now);
    this.scheduler = new DigestScheduler(store, cfg.digests, (d, r) => this.post(d, r), rules, this.options, onError, this.source);
    // Charts are read and drawn in a child process (chart-render.ts): never on this thread, and a renderer crash ends only the child.
    this.scheduler.chartsFor = (d, now, charted) => this.chartsOf(charted, { timeZone: d.timezone, sampleIntervalSec: cfg.sample_interval_s }, now);
    this.scheduler.sendDirect = (target, reply) => this.post(target, reply);
  }

  /**
   * After a round: the processes it sampled that rise toward a full card, posted once each to the digests'
   * channels (and owners where dm_owners), recorded with what the digests reported. Until something can
   * post, nothing is checked: the processes are checked when their next samples come.
   */
  async earlyAlerts(now: number): Promise<void> {
    if (!this.posterSet) return;
    try {
      const found = await this.early.checkYielding(now);
      if (!found.length) return;
      // A silenced GPU's alert is not posted nor marked: if it still rises when the silence ends, it is posted then.
      const silenced = await this.silencedNow(now);
      const alerts = found.filter((a) => !silenced(a.finding.host, a.finding.gpu ?? -1));
      if (!alerts.length) return;
      const runs = this.store.digestRuns;
      const reported = 'log' in runs ? runs.log : runs.slots;
      const deps = { channels: this.cfg.digests, post: this.post, reported, rules: this.rules, owners: this.owners, onError: this.onError };
      await postEarlyAlerts(alerts, { ...deps, withinHours: this.early.options.withinHours }, now);
      for (const a of alerts) this.early.markAlerted(a.key);
    } catch (e) {
      this.onError(e);
    }
  }

  /**
   * After a round: threshold episodes that have held long enough, posted once each to the digests'
   * channels (and owners where dm_owners). Until something can post, none is taken as posted.
   */
  async thresholdAlerts(now: number): Promise<number> {
    if (!this.posterSet || !this.thresholds.enabled) return 0;
    try {
      const episodes = this.store.thresholdEpisodes;
      // Before the first check: the episodes posted before this process started (a restart, other replicas).
      await (this.postedLoaded ??= Promise.resolve(episodes.postedEpisodes()).then(
        (posted) => this.thresholds.resume(posted),
        (e: unknown) => {
          this.postedLoaded = null;
          throw e;
        },
      ));
      const ended = this.thresholds.takeEnded();
      if (ended.length)
        await Promise.resolve(episodes.clearEpisodes(ended)).catch((e: unknown) => {
          this.thresholds.endedAgain(ended);
          throw e;
        });
      const due = this.thresholds.due(now, await this.silencedNow(now));
      const alerts: typeof due = [];
      for (const a of due) {
        // Recorded first: an episode another replica (or this one before a restart) posted is not posted again.
        // A store that cannot record it does not stop the alert.
        const fresh = await Promise.resolve(episodes.markPosted({ host: a.host, gpu: a.gpu, rule: a.rule, sinceMs: a.sinceMs, postedMs: now })).catch(
          (e: unknown) => {
            this.onError(e);
            return true;
          },
        );
        if (fresh) alerts.push(a);
      }
      if (!alerts.length) return 0;
      return await postThresholdAlerts(alerts, { channels: this.cfg.digests, post: this.post, owners: this.owners, onError: this.onError });
    } catch (e) {
      this.onError(e);
      return 0;
    }
  }

  /** The store's posted threshold episodes, read once before the first check (again after a failed read). */
  private postedLoaded: Promise<void> | null = null;

  private leaseTimer: NodeJS.Timeout | null = null;
  /** Hosts whose sampling lease this replica holds, and until when (its own clock) it surely holds them. */
  private held = new Set<string>();
  private heldUntil = 0;

  /** Takes or renews the sampling leases of every registered host it can; a host newly held is sampled at once. */
  private async renewLeases(): Promise<void> {
    const leases = this.store.leases;
    if (!leases || !this.hosts) return;
    const t0 = Date.now();
    const held = await leases.leaseHosts((await this.hosts.list()).map((h) => h.name));
    const gained = [...held].some((h) => !this.held.has(h));
    this.held = held;
    this.heldUntil = t0 + leases.claimTtlMs;
    if (gained && this.started) void this.sampler?.tick();
  }

  /** The time zone of the digest posted to this channel, else of the first digest, else the bot's own. */
  timeZoneFor(platform?: string, channel?: string): string {
    const d = this.cfg.digests.find((x) => x.platform === platform && x.channel === channel) ?? this.cfg.digests[0];
    return d?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
  }

  async start(): Promise<void> {
    const leases = this.store.leases;
    if (leases) {
      // Leases first, renewed every third of their life: a replica that stops renewing loses its hosts to another within one lease.
      await this.renewLeases().catch((e: unknown) => this.onError(e));
      this.leaseTimer = setInterval(() => void this.renewLeases().catch((e: unknown) => this.onError(e)), Math.max(200, Math.floor(leases.claimTtlMs / 3)));
      this.leaseTimer.unref();
    }
    this.sampler?.start();
    const retention = () => {
      // An answer at once (SQLite) or a promise (Postgres), whose failure is reported, not thrown.
      const done = this.store.applyRetention(this.cfg.retention_days);
      if (done instanceof Promise) done.catch((e: unknown) => this.onError(e));
    };
    retention();
    this.retentionTimer = setInterval(retention, 3_600_000);
    this.retentionTimer.unref();
    // A chart child ready before anyone asks: no chart request forks on the bot's thread (chart-render.ts).
    keepChartChildReady(this.chartBudget);
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

  /** Charts of these findings, drawn in a child process (20 hosts at most, the detector's 72 h at most). */
  private async chartsOf(charted: Finding[], style: { timeZone: string; sampleIntervalSec: number }, now: number): Promise<ChartOf | undefined> {
    if (!charted.length) return undefined;
    const hosts = new Set([...new Set(charted.map((f) => f.host))].slice(0, 20));
    const source = await this.store.chartSource([...hosts], now - 72 * HOUR);
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
    const source = await this.store.chartSource([req.host], now - Math.max(req.hours, 72) * HOUR);
    return gpuChartInChild(source, req, style, this.options, known, now, this.chartBudget);
  }

  /** Time and heap budget of each chart's child process. */
  chartBudget: ChartBudget = DEFAULT_CHART_BUDGET;

  async watchHost(name: string, locale?: Locale): Promise<Reply> {
    return this.watchHostNow(name, await this.store.samplesSince(Date.now() - 6 * HOUR, name), locale);
  }

  /** A clean stop with sampling leases: this replica's are given back, so another takes its hosts over at once. */
  async release(): Promise<void> {
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.leaseTimer = null;
    this.heldUntil = 0;
    await this.store.leases?.releaseLeases();
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
    let firstMs = Infinity;
    let lastMs = -Infinity;
    for (const s of samples) {
      const ms = toMs(s.ts);
      if (ms < firstMs) firstMs = ms;
      if (ms > lastMs) lastMs = ms;
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
    // How long this host has been sampled (its samples' span) and when each kind of finding becomes possible.
    const coverage = { text: coverageLine(Number.isFinite(firstMs) ? firstMs : null, lastMs, this.early.options, loc) };
    if (!series.size && !ram.length)
      return { title: t(loc, 'watch.title', { host: name }), severity: 'info', sections: [{ text: t(loc, 'watch.noSamples', { host: name }) }, coverage] };
    const rows = [...series].map(([k, v]) => [k, String(Math.round(v[v.length - 1])), String(Math.round(maxOf(v.filter(Number.isFinite)))), sparkline(v, 36)]);
    if (ram.length) rows.push([t(loc, 'watch.hostRam'), String(Math.round(ram[ram.length - 1])), String(Math.round(maxOf(ram))), sparkline(ram, 36)]);
    return {
      title: t(loc, 'watch.title6h', { host: name }),
      severity: 'info',
      sections: [
        { table: { columns: [t(loc, 'watch.col.series'), t(loc, 'watch.col.now'), t(loc, 'watch.col.max'), t(loc, 'watch.col.last6h')], rows } },
        coverage,
      ],
      ...(people.size ? { mentions: people.table() } : {}),
    };
  }

  stop(): void {
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.sampler?.stop();
    this.scheduler.stop();
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.store.close();
    void Promise.resolve(this.silenceStore?.close?.()).catch(() => undefined);
    void Promise.resolve(this.subscriptionStore?.close?.()).catch(() => undefined);
  }
}
