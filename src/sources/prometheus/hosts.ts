// The hosts of `source: prometheus` groups, answered from the group's Prometheus: `status`, `mem` (and
// with them fit, notify and the leak-watch sampler) from /api/v1/query, history from
// /api/v1/query_range. Requests for hosts of one group made in the same tick are answered by one
// query per exporter family (two round trips for a whole fleet), never one per host.
import { t } from '../../core/i18n.js';
import type { HostMemResult, HostStatusResult } from '../../core/services.js';
import type { Sample } from '../../watch/types.js';
import { PromClient, PrometheusError } from './client.js';
import { groupSettings, type PromGroupSettings, type PrometheusGroupConfig } from './config.js';
import {
  chooseStep,
  gpuQuery,
  gpusOf,
  groupByHost,
  historySamples,
  memoryOf,
  nodeQuery,
  perProcessWarning,
  type PromHost,
  type PromVectorSample,
} from './parse.js';

/** Hosts per query_range request of a history read. */
const HISTORY_HOSTS_PER_QUERY = 8;

const errorLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0].slice(0, 300);

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };
const settle = <T>(p: Promise<T>): Promise<Outcome<T>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (e: unknown) => ({ ok: false as const, error: errorLine(e) }),
  );

type HostSeries = { metric: Record<string, string>; v: number | null }[];

interface Snapshot {
  gpu: Outcome<{ result: PromVectorSample[]; warnings: string[] }>;
  node: Outcome<{ result: PromVectorSample[]; warnings: string[] }>;
  /** One host's series of an answer, the answer grouped by host once for the whole batch (not once per host: 1,000 hosts x 30,000 series). */
  of(kind: 'gpu' | 'node', name: string): HostSeries;
}

/** One group: its client, its hosts, and the per-tick batching of requests. */
export class PrometheusGroup {
  readonly client: PromClient;
  private pending: { hosts: Map<string, PromHost>; waiters: ((s: Snapshot) => void)[] } | null = null;
  private byName: Map<string, PromHost>;

  constructor(
    readonly settings: PromGroupSettings,
    fetchImpl?: typeof fetch,
  ) {
    this.client = new PromClient({
      url: settings.url,
      timeoutMs: settings.timeoutMs,
      ...(settings.auth ? { auth: settings.auth } : {}),
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
    this.byName = new Map(settings.hosts.map((h) => [h.name, h]));
  }

  host(name: string): PromHost | undefined {
    return this.byName.get(name);
  }

  /** The current GPU and node series of this host, fetched together with every other host asked in the same tick. */
  private snapshot(host: PromHost): Promise<Snapshot> {
    if (!this.pending) {
      const batch = { hosts: new Map<string, PromHost>(), waiters: [] as ((s: Snapshot) => void)[] };
      this.pending = batch;
      setImmediate(() => {
        if (this.pending === batch) this.pending = null;
        const hosts = [...batch.hosts.values()];
        void Promise.all([
          settle(this.client.query(gpuQuery(hosts, this.settings.join))),
          settle(this.client.query(nodeQuery(hosts, this.settings.join))),
        ]).then(([gpu, node]) => {
          const { join } = this.settings;
          const grouped: { gpu?: Map<string, HostSeries>; node?: Map<string, HostSeries> } = {};
          const of = (kind: 'gpu' | 'node', name: string): HostSeries => {
            const answer = kind === 'gpu' ? gpu : node;
            if (!answer.ok) return [];
            grouped[kind] ??= groupByHost(answer.value.result, hosts, kind === 'gpu' ? join.gpuLabel : join.nodeLabel, join.stripPort);
            return grouped[kind].get(name) ?? [];
          };
          for (const w of batch.waiters) w({ gpu, node, of });
        });
      });
    }
    const batch = this.pending;
    batch.hosts.set(host.name, host);
    return new Promise((resolve) => batch.waiters.push(resolve));
  }

  private where(host: PromHost): string {
    return `Prometheus at ${this.client.where} (${this.settings.join.gpuLabel}=${host.match})`;
  }

  async status(name: string): Promise<HostStatusResult> {
    const host = this.host(name);
    if (!host) return { name, ok: false, error: t('en', 'reason.hosts.unknown') };
    const started = performance.now();
    const s = await this.snapshot(host);
    const elapsedMs = Math.round(performance.now() - started);
    if (!s.gpu.ok) return { name, ok: false, elapsedMs, error: s.gpu.error };
    const { join } = this.settings;
    const gpuSeries = s.of('gpu', name);
    const nodeSeries = s.of('node', name);
    const reading = gpusOf(gpuSeries);
    const memory = memoryOf(nodeSeries);
    if (!reading.gpus.length && !memory)
      return {
        name,
        ok: false,
        elapsedMs,
        error: t('en', 'reason.prom.noSeries', { match: host.match, where: this.where(host) }),
      };
    const warnings: string[] = [];
    // Each made in English (reason.*); the status reply shows each in the asker's language.
    if (!reading.gpus.length) warnings.push(t('en', 'reason.prom.noGpu', { match: host.match }));
    const pp = perProcessWarning(reading);
    if (pp) warnings.push(pp);
    if (!s.node.ok) warnings.push(t('en', 'reason.prom.noRam', { error: s.node.error }));
    else if (!memory) warnings.push(t('en', 'reason.prom.noNodeMemory', { match: host.match, label: join.nodeLabel }));
    const apiWarnings = [...s.gpu.value.warnings, ...(s.node.ok ? s.node.value.warnings : [])];
    if (apiWarnings.length) warnings.push(t('en', 'reason.prom.partial', { list: [...new Set(apiWarnings)].join('; ') }));
    return {
      name,
      ok: true,
      elapsedMs,
      gpus: reading.gpus,
      processes: reading.processes.map(({ processName, ...p }) => ({ ...p, command: processName })),
      ...(memory ? { memory } : {}),
      ...(warnings.length ? { warning: warnings.join('; ') } : {}),
    };
  }

  async mem(name: string): Promise<HostMemResult> {
    const host = this.host(name);
    if (!host) return { name, ok: false, error: t('en', 'reason.hosts.unknown') };
    const started = performance.now();
    const s = await this.snapshot(host);
    const elapsedMs = Math.round(performance.now() - started);
    if (!s.node.ok) return { name, ok: false, elapsedMs, error: s.node.error };
    const { join } = this.settings;
    const memory = memoryOf(s.of('node', name));
    if (!memory)
      return {
        name,
        ok: false,
        elapsedMs,
        error: t('en', 'reason.prom.noNodeMemoryAt', { match: host.match, where: this.client.where, label: join.nodeLabel }),
      };
    // The API's warnings (partial data from a federated or remote-read source) come with the figures, as in status.
    const apiWarnings = [...new Set(s.node.value.warnings)];
    return {
      name,
      ok: true,
      elapsedMs,
      memory,
      ...(apiWarnings.length ? { warning: t('en', 'reason.prom.partial', { list: apiWarnings.join('; ') }) } : {}),
    };
  }

  /**
   * The hosts' history over [startMs, endMs] as watch samples, read with query_range at a step of at
   * least history_step_s that keeps every series under 11,000 points.
   */
  async history(startMs: number, endMs: number, names?: readonly string[]): Promise<{ samples: Sample[]; warnings: string[]; stepS: number }> {
    const hosts = names ? this.settings.hosts.filter((h) => names.includes(h.name)) : this.settings.hosts;
    const startS = Math.floor(startMs / 1000);
    const endS = Math.floor(endMs / 1000);
    const stepS = chooseStep(startS, endS, this.settings.historyStepS);
    if (!hosts.length || endS <= startS) return { samples: [], warnings: [], stepS };
    const { join } = this.settings;
    const samples: Sample[] = [];
    const warnings: string[] = [];
    // A few hosts per request, one request after the other: days of a whole fleet in one answer would
    // be hundreds of MB (the client refuses answers over 64 MiB).
    for (let i = 0; i < hosts.length; i += HISTORY_HOSTS_PER_QUERY) {
      const part = hosts.slice(i, i + HISTORY_HOSTS_PER_QUERY);
      const [gpu, node] = await Promise.all([
        this.client.queryRange(gpuQuery(part, join), startS, endS, stepS),
        settle(this.client.queryRange(nodeQuery(part, join), startS, endS, stepS)),
      ]);
      warnings.push(...gpu.warnings, ...(node.ok ? node.value.warnings : [`host RAM history unavailable: ${node.error}`]));
      samples.push(...historySamples(gpu.result, node.ok ? node.value.result : [], part, join, Math.max(600, 3 * stepS)));
    }
    return { samples, warnings: [...new Set(warnings)], stepS };
  }
}

/** Every `source: prometheus` group of the config. */
export class PrometheusHosts {
  private byHost = new Map<string, PrometheusGroup>();
  constructor(readonly groups: PrometheusGroup[]) {
    for (const g of groups) for (const h of g.settings.hosts) this.byHost.set(h.name, g);
  }

  static fromConfig(groups: readonly PrometheusGroupConfig[], env: NodeJS.ProcessEnv = process.env): PrometheusHosts | null {
    if (!groups.length) return null;
    return new PrometheusHosts(groups.map((g) => new PrometheusGroup(groupSettings(g, env))));
  }

  has(name: string): boolean {
    return this.byHost.has(name);
  }

  names(): string[] {
    return [...this.byHost.keys()];
  }

  /** `prometheus URL (label=value)`: what `hosts list` shows as the target. */
  describe(name: string): string {
    const g = this.byHost.get(name);
    const h = g?.host(name);
    return g && h ? `prometheus ${g.client.where} (${g.settings.join.gpuLabel}=${h.match})` : 'unknown';
  }

  status(name: string): Promise<HostStatusResult> {
    const g = this.byHost.get(name);
    return g ? g.status(name) : Promise.resolve({ name, ok: false, error: 'unknown host' });
  }

  mem(name: string): Promise<HostMemResult> {
    const g = this.byHost.get(name);
    return g ? g.mem(name) : Promise.resolve({ name, ok: false, error: 'unknown host' });
  }

  /** History of every Prometheus host (or the named ones), group by group; a failing group is one warning line. */
  async history(startMs: number, endMs: number, names?: readonly string[]): Promise<{ samples: Sample[]; warnings: string[] }> {
    const parts = await Promise.all(
      this.groups.map((g) =>
        g.history(startMs, endMs, names).catch((e: unknown) => ({
          samples: [] as Sample[],
          warnings: [`${g.settings.name}: ${e instanceof PrometheusError ? e.message : errorLine(e)}`],
        })),
      ),
    );
    return { samples: parts.flatMap((p) => p.samples), warnings: parts.flatMap((p) => p.warnings) };
  }
}
