// The hosts of `source: prometheus` groups, answered from the group's Prometheus: `status`, `mem` (and
// with them fit, notify and the leak-watch sampler) from /api/v1/query, history from
// /api/v1/query_range. Requests for hosts of one group made in the same tick are answered by one
// query per exporter family (two round trips for a whole fleet), never one per host.
import { english, message, MessageError, type Message, type Text } from '../../core/message.js';
import type { HostInfo, HostMemResult, HostStatusResult } from '../../core/services.js';
import type { HostEntry } from '../../hosts/registry.js';
import { hostFailure, hostInfo, hostWarnings, type HistoryFill, type HistoryStore, type HostSource } from '../../hosts/source.js';
import type { Sample } from '../../watch/types.js';
import { backfillFromPrometheus } from './backfill.js';
import { PromClient, PrometheusError, type PromAnswer } from './client.js';
import { groupSettings, type PromGroupSettings, type PrometheusGroupConfig } from './config.js';
import {
  checkMatrix,
  checkVector,
  chooseStep,
  gpuQuery,
  gpusOf,
  groupByHost,
  historySamples,
  malformedList,
  memoryOf,
  nodeQuery,
  perProcessWarning,
  type MalformedItem,
  type PromHost,
  type PromVectorSample,
} from './parse.js';

/** Hosts per query_range request of a history read. */
const HISTORY_HOSTS_PER_QUERY = 8;

/** Series an instant answer may hold per host asked (8 GPUs x 9 series and hundreds of processes fit), and at least. */
const SERIES_PER_HOST = 1000;
const MIN_SERIES_CAP = 20_000;

const errorLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0].slice(0, 300);

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };
const settle = <T>(p: Promise<T>): Promise<Outcome<T>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (e: unknown) => ({ ok: false as const, error: errorLine(e) }),
  );

type HostSeries = { metric: Record<string, string>; v: number | null }[];

interface CheckedAnswer {
  result: PromVectorSample[];
  warnings: string[];
  malformed: MalformedItem[];
}

interface Snapshot {
  gpu: Outcome<CheckedAnswer>;
  node: Outcome<CheckedAnswer>;
  /** One host's series of an answer, the answer grouped by host once for the whole batch (not once per host: 1,000 hosts x 30,000 series). */
  of(kind: 'gpu' | 'node', name: string): HostSeries;
  /** The answer's skipped items that are this host's (or nobody's: an item without a readable join label). */
  malformedOf(kind: 'gpu' | 'node', host: PromHost): MalformedItem[];
}

/** One group: its client, its hosts, and the batching of requests (one request per exporter family in flight at a time). */
export class PrometheusGroup {
  readonly client: PromClient;
  /** The request under way: asks for its hosts share its answer. */
  private inFlight: { hosts: Set<string>; answer: Promise<Snapshot> } | null = null;
  /** The hosts asked since: one request for all of them, once the one in flight is done (or at the next tick). */
  private next: { hosts: Map<string, PromHost>; answer: Promise<Snapshot> } | null = null;
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

  /**
   * The current GPU and node series of this host. Single flight per group: an ask for a host whose
   * request is under way shares that answer; other asks wait for it and then go together in one request,
   * so however many people ask at once, one request per exporter family is in flight (and one answer in memory).
   */
  private snapshot(host: PromHost): Promise<Snapshot> {
    if (this.inFlight?.hosts.has(host.name)) return this.inFlight.answer;
    if (!this.next) {
      const before = this.inFlight?.answer;
      const batch: { hosts: Map<string, PromHost>; answer: Promise<Snapshot> } = { hosts: new Map(), answer: Promise.resolve(null as never) };
      batch.answer = (async () => {
        // Asks made while waiting (this tick, or while the request before is in flight) join this batch.
        await (before ?? new Promise<void>((r) => setImmediate(r)));
        if (this.next === batch) this.next = null;
        const flight = { hosts: new Set(batch.hosts.keys()), answer: this.fetchSnapshot([...batch.hosts.values()]) };
        this.inFlight = flight;
        try {
          return await flight.answer;
        } finally {
          if (this.inFlight === flight) this.inFlight = null;
        }
      })();
      this.next = batch;
    }
    this.next.hosts.set(host.name, host);
    return this.next.answer;
  }

  /** The two instant queries for these hosts, checked item by item; never rejects (a failed query is its Outcome). */
  private async fetchSnapshot(hosts: PromHost[]): Promise<Snapshot> {
    const { join } = this.settings;
    const maxSeries = Math.max(MIN_SERIES_CAP, SERIES_PER_HOST * hosts.length);
    const checked = (label: string) => (a: PromAnswer<unknown>) => {
      const { samples, malformed } = checkVector(a.result, label, join.stripPort);
      return { result: samples, warnings: a.warnings, malformed };
    };
    const [gpu, node] = await Promise.all([
      settle(this.client.query(gpuQuery(hosts, join, { health: true }), undefined, { maxSeries }).then(checked(join.gpuLabel))),
      settle(this.client.query(nodeQuery(hosts, join), undefined, { maxSeries }).then(checked(join.nodeLabel))),
    ]);
    const grouped: { gpu?: Map<string, HostSeries>; node?: Map<string, HostSeries> } = {};
    return {
      gpu,
      node,
      of: (kind, name) => {
        const answer = kind === 'gpu' ? gpu : node;
        if (!answer.ok) return [];
        grouped[kind] ??= groupByHost(answer.value.result, hosts, kind === 'gpu' ? join.gpuLabel : join.nodeLabel, join.stripPort);
        return grouped[kind].get(name) ?? [];
      },
      malformedOf: (kind, host) => {
        const answer = kind === 'gpu' ? gpu : node;
        return answer.ok ? answer.value.malformed.filter((m) => m.hostKey === null || m.hostKey === host.match) : [];
      },
    };
  }

  /** The line naming an answer's skipped items for this host, if any. */
  private malformedLine(s: Snapshot, host: PromHost, kinds: ('gpu' | 'node')[]): Message | undefined {
    const items = kinds.flatMap((k) => s.malformedOf(k, host));
    return items.length ? message('reason.prom.malformed', { n: items.length, list: malformedList(items) }) : undefined;
  }

  private where(host: PromHost): string {
    return `Prometheus at ${this.client.where} (${this.settings.join.gpuLabel}=${host.match})`;
  }

  /** One host's status; whatever goes wrong with its part of the answer is its own one line, never the fleet's. */
  async status(name: string): Promise<HostStatusResult> {
    const host = this.host(name);
    if (!host) return hostFailure(name, message('reason.hosts.unknown'));
    const started = performance.now();
    try {
      return this.statusOf(host, await this.snapshot(host), Math.round(performance.now() - started));
    } catch (e) {
      return hostFailure(name, errorLine(e), Math.round(performance.now() - started));
    }
  }

  private statusOf(host: PromHost, s: Snapshot, elapsedMs: number): HostStatusResult {
    const name = host.name;
    if (!s.gpu.ok) return hostFailure(name, s.gpu.error, elapsedMs);
    const { join } = this.settings;
    const gpuSeries = s.of('gpu', name);
    const nodeSeries = s.of('node', name);
    const reading = gpusOf(gpuSeries);
    const memory = memoryOf(nodeSeries);
    const skipped = this.malformedLine(s, host, ['gpu', 'node']);
    if (!reading.gpus.length && !memory)
      return hostFailure(name, [message('reason.prom.noSeries', { match: host.match, where: this.where(host) }), ...(skipped ? [skipped] : [])], elapsedMs);
    const warnings: Text[] = [];
    // Each a catalogue message (reason.*) or the exporter's own words; the status reply renders each in the asker's language.
    if (!reading.gpus.length) warnings.push(message('reason.prom.noGpu', { match: host.match }));
    const pp = perProcessWarning(reading);
    if (pp) warnings.push(pp);
    if (!s.node.ok) warnings.push(message('reason.prom.noRam', { error: s.node.error }));
    else if (!memory) warnings.push(message('reason.prom.noNodeMemory', { match: host.match, label: join.nodeLabel }));
    if (skipped) warnings.push(skipped);
    const apiWarnings = [...s.gpu.value.warnings, ...(s.node.ok ? s.node.value.warnings : [])];
    if (apiWarnings.length) warnings.push(message('reason.prom.partial', { list: [...new Set(apiWarnings)].join('; ') }));
    return {
      name,
      ok: true,
      elapsedMs,
      gpus: reading.gpus,
      processes: reading.processes.map(({ processName, ...p }) => ({ ...p, command: processName })),
      ...(memory ? { memory } : {}),
      ...hostWarnings(warnings),
    };
  }

  async mem(name: string): Promise<HostMemResult> {
    const host = this.host(name);
    if (!host) return hostFailure(name, message('reason.hosts.unknown'));
    const started = performance.now();
    try {
      return this.memOf(host, await this.snapshot(host), Math.round(performance.now() - started));
    } catch (e) {
      return hostFailure(name, errorLine(e), Math.round(performance.now() - started));
    }
  }

  private memOf(host: PromHost, s: Snapshot, elapsedMs: number): HostMemResult {
    const name = host.name;
    if (!s.node.ok) return hostFailure(name, s.node.error, elapsedMs);
    const { join } = this.settings;
    const memory = memoryOf(s.of('node', name));
    const skipped = this.malformedLine(s, host, ['node']);
    if (!memory)
      return hostFailure(
        name,
        [message('reason.prom.noNodeMemoryAt', { match: host.match, where: this.client.where, label: join.nodeLabel }), ...(skipped ? [skipped] : [])],
        elapsedMs,
      );
    // The API's warnings (partial data from a federated or remote-read source) come with the figures, as in status.
    const apiWarnings = [...new Set(s.node.value.warnings)];
    const warnings = [skipped, apiWarnings.length ? message('reason.prom.partial', { list: apiWarnings.join('; ') }) : undefined].filter(
      (w) => w !== undefined,
    );
    // MIG instances' memory, as the SSH path's `mem` lists them, from the same snapshot's GPU series.
    const mig = s.gpu.ok ? gpusOf(s.of('gpu', name)).gpus.flatMap((g) => (g.mig?.length ? [{ gpuIndex: g.index, instances: g.mig }] : [])) : [];
    return {
      name,
      ok: true,
      elapsedMs,
      memory,
      ...hostWarnings(warnings),
      ...(mig.length ? { mig } : {}),
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
      const gpuChecked = checkMatrix(gpu.result, join.gpuLabel, join.stripPort);
      const nodeChecked = node.ok ? checkMatrix(node.value.result, join.nodeLabel, join.stripPort) : { series: [], malformed: [] };
      const malformed = [...gpuChecked.malformed, ...nodeChecked.malformed];
      const partWarnings = [...gpu.warnings, ...(node.ok ? node.value.warnings : [`host RAM history unavailable: ${node.error}`])];
      if (malformed.length) partWarnings.push(english(message('reason.prom.malformed', { n: malformed.length, list: malformedList(malformed) })));
      // One by one, never push(...batch): a history of 8 hosts x 8 GPUs x 72 h is more arguments than a call takes.
      for (const w of partWarnings) warnings.push(w);
      for (const sample of historySamples(gpuChecked.series, nodeChecked.series, part, join, Math.max(600, 3 * stepS))) samples.push(sample);
    }
    return { samples, warnings: [...new Set(warnings)], stepS };
  }
}

/** Every `source: prometheus` group of the config, as one host source: its hosts are read from Prometheus, never over SSH. */
export class PrometheusHostSource implements HostSource {
  readonly label = 'Prometheus';
  private byHost = new Map<string, PrometheusGroup>();
  constructor(readonly groups: PrometheusGroup[]) {
    for (const g of groups) for (const h of g.settings.hosts) this.byHost.set(h.name, g);
  }

  static fromConfig(groups: readonly PrometheusGroupConfig[], env: NodeJS.ProcessEnv = process.env): PrometheusHostSource | null {
    if (!groups.length) return null;
    return new PrometheusHostSource(groups.map((g) => new PrometheusGroup(groupSettings(g, env))));
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

  info(entry: HostEntry): HostInfo {
    return hostInfo(entry, this.describe(entry.name));
  }

  status({ name }: HostEntry): Promise<HostStatusResult> {
    const g = this.byHost.get(name);
    return g ? g.status(name) : Promise.resolve({ name, ok: false, error: 'unknown host' });
  }

  mem({ name }: HostEntry): Promise<HostMemResult> {
    const g = this.byHost.get(name);
    return g ? g.mem(name) : Promise.resolve({ name, ok: false, error: 'unknown host' });
  }

  /** No host key to trust: Prometheus is reached over HTTP(S), its hosts never over SSH. */
  trust({ name }: HostEntry): Promise<never> {
    return Promise.reject(new MessageError(message('reason.hosts.promTrust', { name })));
  }

  /** What Prometheus holds since the store's last sample, stored before the first digest (see backfill.ts). */
  backfill(store: HistoryStore, now: number, windowHours?: number): Promise<HistoryFill> {
    return backfillFromPrometheus(this, store, now, windowHours);
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

  close(): Promise<void> {
    return Promise.resolve();
  }
}
