// Prometheus as a data source, the pure half: what /api/v1/query and /api/v1/query_range answered
// (dcgm-exporter or nvidia_gpu_exporter for GPU memory, node_exporter for host RAM) turned into the same
// status / mem shapes and watch samples the SSH path produces, so status rendering, fit and the leak
// detector read them unchanged. The HTTP side is in client.ts (as Telegraf's nvidia_smi keeps its exec
// apart from its parser); nothing here does I/O.
//
// The label join. Exporters run on different ports of one machine, so their `instance` labels differ
// (10.0.0.5:9400 for dcgm-exporter, 10.0.0.5:9835 for nvidia_gpu_exporter, 10.0.0.5:9100 for
// node_exporter). A host is found by one label per exporter family (`join.gpu_label`, `join.node_label`,
// `instance` for both by default) whose value, with the `:port` cut off when `join.strip_port` is on
// (the default), equals the host's `match` (its name unless set). dcgm-exporter's own `Hostname` label
// (`hostname` in newer releases) works as gpu_label too: both spellings are read.
import { message, type Message } from '../../core/message.js';
import type { GpuHealthStatus, GpuProcessStatus, GpuStatus, HostMemory, MigInstanceStatus } from '../../core/services.js';
import type { GpuSample, HostRamSample, ProcessSample, Sample } from '../../watch/types.js';

/** Prometheus refuses a range query with more than this many points per series. */
export const MAX_POINTS_PER_SERIES = 11_000;

export interface PromVectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface PromMatrixSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

export interface JoinConfig {
  /** Label naming the host on GPU exporter series (instance, Hostname, node, ...). */
  gpuLabel: string;
  /** Label naming the host on node_exporter series. */
  nodeLabel: string;
  /** Compare label values without a trailing :port. */
  stripPort: boolean;
}

export const DEFAULT_JOIN: JoinConfig = { gpuLabel: 'instance', nodeLabel: 'instance', stripPort: true };

export interface PromHost {
  /** The name people type in chat. */
  name: string;
  /** The join label's value for this host (port stripped), validated by the config. */
  match: string;
}

/** What may be a host's match value: a host name, IP address (v4 or v6) or node name. */
export const MATCH_VALUE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,252}$/;

// ---- PromQL text: nothing from the config or chat reaches a query unescaped ----

/** A PromQL double-quoted string literal (backslash, quote and control characters escaped). */
export function promString(s: string): string {
  return (
    '"' +
    s.replace(/[\\"\n\r\t]|[\x00-\x1f\x7f]/g, (c) => {
      if (c === '\\') return '\\\\';
      if (c === '"') return '\\"';
      if (c === '\n') return '\\n';
      if (c === '\r') return '\\r';
      if (c === '\t') return '\\t';
      return '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0');
    }) +
    '"'
  );
}

/** RE2 metacharacters escaped, so a value matches only itself inside a =~ matcher. */
export function regexLiteral(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

/** A label name as Prometheus allows it. */
export const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/;

const GPU_METRICS =
  'DCGM_FI_DEV_(FB_USED|FB_FREE|FB_RESERVED|FB_TOTAL|GPU_UTIL|GPU_TEMP)|' +
  'nvidia_smi_(memory_used_bytes|memory_total_bytes|memory_free_bytes|memory_reserved_bytes|gpu_info|utilization_gpu_ratio|temperature_gpu|compute_app_used_memory_bytes|compute_apps_last_collect_success)';
/**
 * dcgm-exporter's health fields (DCGM field names): power draw and its management limit (W), the last Xid,
 * volatile double-bit (uncorrectable) ECC errors, a pending page retirement, a pending or failed row remap.
 * Read by status only (instant), never in the leak watch's range queries.
 */
const GPU_HEALTH_METRICS = 'DCGM_FI_DEV_(POWER_USAGE|POWER_MGMT_LIMIT|XID_ERRORS|ECC_DBE_VOL_TOTAL|RETIRED_PENDING|ROW_REMAP_PENDING|ROW_REMAP_FAILURE)';
const NODE_METRICS = 'node_memory_(MemTotal|MemAvailable|MemFree|Buffers|Cached|SwapTotal|SwapFree)_bytes';

/** The label values a set of hosts matches: `value` or `value:port`. */
function hostMatcher(label: string, hosts: readonly PromHost[], stripPort: boolean): string {
  if (!LABEL_NAME.test(label)) throw new Error(`not a label name: ${label.slice(0, 40)}`);
  const values = hosts.map((h) => {
    if (!MATCH_VALUE.test(h.match)) throw new Error(`not a host match value: ${h.name}`);
    return regexLiteral(h.match);
  });
  const alternatives = `(${values.join('|')})${stripPort ? '(:[0-9]{1,5})?' : ''}`;
  return `${label}=~${promString(alternatives)}`;
}

/** dcgm-exporter spells its host label Hostname, newer releases hostname: either one joins. */
function labelSpellings(label: string): string[] {
  return label === 'Hostname' || label === 'hostname' ? ['Hostname', 'hostname'] : [label];
}

/** One instant/range query for the GPU exporters' series of these hosts (both exporter families); `health` adds dcgm-exporter's health fields. */
export function gpuQuery(hosts: readonly PromHost[], join: JoinConfig, opts: { health?: boolean } = {}): string {
  const metrics = opts.health ? `${GPU_METRICS}|${GPU_HEALTH_METRICS}` : GPU_METRICS;
  return labelSpellings(join.gpuLabel)
    .map((l) => `{__name__=~${promString(metrics)},${hostMatcher(l, hosts, join.stripPort)}}`)
    .join(' or ');
}

/** One query for node_exporter's memory series of these hosts. */
export function nodeQuery(hosts: readonly PromHost[], join: JoinConfig): string {
  return `{__name__=~${promString(NODE_METRICS)},${hostMatcher(join.nodeLabel, hosts, join.stripPort)}}`;
}

/**
 * The step of a range query over [start, end] (seconds): at least `minStep`, and coarse enough that no
 * series has more than 11,000 points (Prometheus answers 400 otherwise).
 */
export function chooseStep(startS: number, endS: number, minStepS = 15): number {
  const range = Math.max(0, endS - startS);
  return Math.max(Math.ceil(minStepS), Math.ceil(range / MAX_POINTS_PER_SERIES), 1);
}

// ---- reading the series ----

/** The host a series belongs to (its join label, port cut off), or null. */
export function hostKeyOf(metric: Record<string, string>, label: string, stripPort: boolean): string | null {
  let v: string | undefined;
  for (const l of labelSpellings(label)) if (metric[l] !== undefined && metric[l] !== '') v = metric[l];
  if (v === undefined) return null;
  if (!stripPort) return v;
  // [v6 address]:port or [v6 address] (no regex with backtracking over an untrusted label value)
  const close = v.lastIndexOf(']');
  if (v.startsWith('[') && close > 1 && (close === v.length - 1 || /^:\d+$/.test(v.slice(close + 1)))) return v.slice(1, close);
  // host:port, but not a bare IPv6 address (more than one colon)
  const m = /^([^:]+):\d{1,5}$/.exec(v);
  return m ? m[1] : v;
}

// ---- what the API answered, item by item: one malformed item is skipped and named, never thrown on ----

/** A series of an answer that was skipped: its place in the answer, what is wrong, and its host's join value where that could be read. */
export interface MalformedItem {
  index: number;
  what: string;
  hostKey: string | null;
}

const MAX_NAMED = 3;

/** What a JSON value is, in a few characters (for the line naming a skipped item). */
const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Why a label set is not one (labels are strings, every one), or null when it is. */
function labelsProblem(m: unknown): string | null {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return `metric is ${kindOf(m)}`;
  for (const [k, v] of Object.entries(m)) if (typeof v !== 'string') return `label ${k.slice(0, 40)} is ${kindOf(v)}`;
  return null;
}

/** A sample value as the API gives it: [unix time, "number"]. */
const isPoint = (p: unknown): p is [number, string] =>
  Array.isArray(p) && p.length === 2 && typeof p[0] === 'number' && Number.isFinite(p[0]) && typeof p[1] === 'string';

/** The host join value of a possibly malformed item, where its labels give one. */
function keyOfItem(item: unknown, label: string, stripPort: boolean): string | null {
  const m = item && typeof item === 'object' ? (item as { metric?: unknown }).metric : undefined;
  if (!m || typeof m !== 'object') return null;
  const safe: Record<string, string> = {};
  for (const l of labelSpellings(label)) {
    const v = (m as Record<string, unknown>)[l];
    if (typeof v === 'string') safe[l] = v;
  }
  return hostKeyOf(safe, label, stripPort);
}

/**
 * An instant-query answer's items as samples: an item that is not an object, whose `metric` is not a
 * set of string labels or whose `value` is not [time, "number"] is left out and listed (with its host
 * where its join label says it), so one bad item costs itself, not the hosts beside it.
 */
export function checkVector(result: readonly unknown[], label: string, stripPort: boolean): { samples: PromVectorSample[]; malformed: MalformedItem[] } {
  const samples: PromVectorSample[] = [];
  const malformed: MalformedItem[] = [];
  result.forEach((item, index) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) return malformed.push({ index, what: `item is ${kindOf(item)}`, hostKey: null });
    const s = item as { metric?: unknown; value?: unknown };
    const problem = labelsProblem(s.metric) ?? (isPoint(s.value) ? null : `value is ${kindOf(s.value)}`);
    if (problem) return malformed.push({ index, what: problem, hostKey: keyOfItem(item, label, stripPort) });
    samples.push(s as PromVectorSample);
  });
  return { samples, malformed };
}

/**
 * A range-query answer's series, checked as checkVector checks items; within a good series a point
 * that is not [time, "number"] is dropped (and counted as one malformed item of its series).
 */
export function checkMatrix(result: readonly unknown[], label: string, stripPort: boolean): { series: PromMatrixSeries[]; malformed: MalformedItem[] } {
  const series: PromMatrixSeries[] = [];
  const malformed: MalformedItem[] = [];
  result.forEach((item, index) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) return malformed.push({ index, what: `item is ${kindOf(item)}`, hostKey: null });
    const s = item as { metric?: unknown; values?: unknown };
    const problem = labelsProblem(s.metric) ?? (Array.isArray(s.values) ? null : `values is ${kindOf(s.values)}`);
    if (problem) return malformed.push({ index, what: problem, hostKey: keyOfItem(item, label, stripPort) });
    const values = s.values as unknown[];
    const good = values.filter(isPoint);
    if (good.length !== values.length)
      malformed.push({ index, what: `${values.length - good.length} points are not [time, "value"]`, hostKey: keyOfItem(item, label, stripPort) });
    series.push({ metric: s.metric as Record<string, string>, values: good });
  });
  return { series, malformed };
}

/** The items skipped, as one line's list: the first few named (`item 3: metric is null`), the rest counted. */
export function malformedList(items: readonly MalformedItem[]): string {
  const named = items.slice(0, MAX_NAMED).map((m) => `#${m.index}: ${m.what}`);
  return items.length > MAX_NAMED ? `${named.join(', ')}, +${items.length - MAX_NAMED}` : named.join(', ');
}

const num = (s: string | undefined): number | null => {
  if (s === undefined) return null;
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
};
const MiB = 2 ** 20;

/**
 * nvidia_gpu_exporter labels a GPU by its UUID lowercased without the `GPU-` prefix; nvidia-smi (and so
 * the SSH path and dcgm-exporter) prints `GPU-...`: the prefix is put back so both name a GPU alike.
 */
export const smiUuid = (u: string): string => (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(u) ? `GPU-${u}` : u);

/** A series' metric name. */
const nameOf = (m: Record<string, string>) => m.__name__ ?? '';

export type GpuExporter = 'dcgm' | 'nvidia_gpu_exporter';

/** What one host's GPU series say, exporter-neutral. */
export interface HostGpuReading {
  exporter: GpuExporter | null;
  gpus: GpuStatus[];
  processes: (GpuProcessStatus & { processName: string | null })[];
  /** Whether the exporter reports processes at all (nvidia_gpu_exporter with --collect.compute-apps). */
  perProcess: boolean;
  /** Kubernetes pods holding the GPUs, from dcgm-exporter's pod mapping labels (see podOf); empty elsewhere. */
  pods: PodHolder[];
}

/** A pod that holds a GPU, as dcgm-exporter labels the GPU's series when it maps devices to pods. */
export interface PodHolder {
  gpu: number;
  namespace: string | null;
  pod: string;
  container: string | null;
}

/**
 * dcgm-exporter on Kubernetes (its pod mapping, on by default in the GPU Operator) labels a GPU's series
 * with the pod using it: `pod`, `namespace`, `container` (`pod_name`, `pod_namespace`, `container_name`
 * with --kubernetes-use-old-namespace). Scraped through Kubernetes service discovery, Prometheus' own
 * target labels of the same names (the exporter's pod) win and the exporter's become `exported_pod`,
 * `exported_namespace`, `exported_container`: those are read first. A pod that is the exporter itself
 * (its container or pod named dcgm-exporter, what Prometheus' target labels say when no workload is
 * mapped) holds nothing.
 */
export function podOf(m: Record<string, string>): Omit<PodHolder, 'gpu'> | null {
  for (const [p, ns, c] of [
    ['exported_pod', 'exported_namespace', 'exported_container'],
    ['pod', 'namespace', 'container'],
    ['pod_name', 'pod_namespace', 'container_name'],
  ]) {
    const pod = m[p];
    if (!pod) continue;
    const container = m[c] || null;
    if (/dcgm-exporter/.test(pod) || (container && /dcgm-exporter/.test(container))) continue;
    return { namespace: m[ns] || null, pod, container };
  }
  return null;
}

interface GpuAcc {
  index: number | null;
  uuid: string | null;
  name: string | null;
  used: number | null;
  free: number | null;
  reserved: number | null;
  total: number | null;
  util: number | null;
  temp: number | null;
  /** dcgm-exporter's health fields by DCGM field name (POWER_USAGE, XID_ERRORS, ...), where reported. */
  health: Map<string, number | null>;
}

const emptyAcc = (): GpuAcc => ({
  index: null,
  uuid: null,
  name: null,
  used: null,
  free: null,
  reserved: null,
  total: null,
  util: null,
  temp: null,
  health: new Map(),
});

/** One MIG GPU instance of a GPU as dcgm-exporter labels its series (GPU_I_ID, GPU_I_PROFILE), memory in MiB. */
interface MigAcc {
  gi: number | null;
  profile: string | null;
  used: number | null;
  free: number | null;
  reserved: number | null;
  total: number | null;
}

/** GPU instances per GPU a host's answer may list (a GPU has at most 7; more is not an exporter's answer). */
const MAX_MIG_PER_GPU = 16;
/** A GPU instance id as dcgm-exporter prints it (NVML's ids are small integers). */
const MIG_GI_ID = /^\d{1,4}$/;
/** A MIG profile name (1g.10gb, 1c.3g.71gb, 1g.12gb+me, 7g.79gb); DCGM's blank `<<<NULL>>>` and anything else is no profile. */
const MIG_PROFILE = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,39}$/;

const migOf = (m: MigAcc): MigInstanceStatus => {
  // As for whole GPUs: FB_TOTAL where exported, else used + free (+ reserved).
  const total = m.total ?? (m.used !== null && m.free !== null ? m.used + m.free + (m.reserved ?? 0) : null);
  return {
    gi: m.gi,
    ci: null,
    device: null,
    profile: m.profile,
    memoryUsedMiB: m.used === null ? null : Math.round(m.used),
    memoryTotalMiB: total === null ? null : Math.round(total),
  };
};

const HEALTH_FIELDS = new Set([
  'POWER_USAGE',
  'POWER_MGMT_LIMIT',
  'XID_ERRORS',
  'ECC_DBE_VOL_TOTAL',
  'RETIRED_PENDING',
  'ROW_REMAP_PENDING',
  'ROW_REMAP_FAILURE',
]);

/** A GPU's health from its dcgm-exporter fields; undefined when none was reported (no column, no flag). */
export function healthOf(fields: ReadonlyMap<string, number | null>): GpuHealthStatus | undefined {
  if (fields.size === 0) return undefined;
  const value = (f: string) => {
    const v = fields.get(f);
    return v === undefined || v === null || v < 0 ? null : v;
  };
  const flag = (f: string) => {
    const v = value(f);
    return v === null ? null : v > 0;
  };
  const xid = value('XID_ERRORS');
  return {
    powerDrawW: value('POWER_USAGE'),
    powerLimitW: value('POWER_MGMT_LIMIT'),
    eccUncorrectedVolatile: value('ECC_DBE_VOL_TOTAL'),
    retiredPagesPending: flag('RETIRED_PENDING'),
    remappedRowsPending: flag('ROW_REMAP_PENDING'),
    remappedRowsFailure: flag('ROW_REMAP_FAILURE'),
    clockReasons: null,
    lastXid: xid === null ? null : Math.round(xid),
  };
}

/**
 * The GPU series of ONE host at one instant (values: metric labels -> number) as GPUs and processes.
 * dcgm-exporter reports MiB per `gpu` (index) with UUID and modelName; its MIG instance series (GPU_I_ID,
 * GPU_I_PROFILE, the parent's gpu and UUID) are the GPU's `mig` list, never its whole-GPU figures. Where MIG is
 * on, an exporter may report the instances only (NVIDIA/dcgm-exporter#317): the GPU is then known by its
 * instances, with no whole-GPU memory. nvidia_gpu_exporter reports bytes per `uuid`, its index and name in
 * nvidia_smi_gpu_info, processes in nvidia_smi_compute_app_used_memory_bytes.
 */
export function gpusOf(series: readonly { metric: Record<string, string>; v: number | null }[]): HostGpuReading {
  const dcgm = new Map<string, GpuAcc>();
  const nv = new Map<string, GpuAcc>();
  const procs: { uuid: string; pid: number; mib: number | null; name: string | null }[] = [];
  let perProcess = false;
  const podsByKey = new Map<string, Map<string, Omit<PodHolder, 'gpu'>>>();
  const migByKey = new Map<string, Map<string, MigAcc>>();
  for (const { metric: m, v } of series) {
    const n = nameOf(m);
    if (n.startsWith('DCGM_FI_DEV_')) {
      const key = m.gpu ?? m.UUID ?? '';
      let g = dcgm.get(key);
      if (!g) dcgm.set(key, (g = emptyAcc()));
      g.index ??= num(m.gpu);
      g.uuid ??= m.UUID ?? m.uuid ?? null;
      g.name ??= m.modelName ?? null;
      const pod = podOf(m);
      if (pod) {
        let held = podsByKey.get(key);
        if (!held) podsByKey.set(key, (held = new Map<string, Omit<PodHolder, 'gpu'>>()));
        held.set(`${pod.namespace}/${pod.pod}/${pod.container}`, pod);
      }
      const field = n.slice('DCGM_FI_DEV_'.length);
      if (m.GPU_I_ID !== undefined) {
        // A MIG instance: its memory is the instance's, never the whole GPU's (nor its health).
        let instances = migByKey.get(key);
        if (!instances) migByKey.set(key, (instances = new Map<string, MigAcc>()));
        let mi = instances.get(m.GPU_I_ID);
        if (!mi && instances.size >= MAX_MIG_PER_GPU) continue;
        if (!mi) {
          const profile = m.GPU_I_PROFILE ?? '';
          mi = {
            gi: MIG_GI_ID.test(m.GPU_I_ID) ? Number(m.GPU_I_ID) : null,
            profile: MIG_PROFILE.test(profile) ? profile : null,
            used: null,
            free: null,
            reserved: null,
            total: null,
          };
          instances.set(m.GPU_I_ID, mi);
        }
        if (field === 'FB_USED') mi.used = v;
        else if (field === 'FB_FREE') mi.free = v;
        else if (field === 'FB_RESERVED') mi.reserved = v;
        else if (field === 'FB_TOTAL') mi.total = v;
        continue;
      }
      if (field === 'FB_USED') g.used = v;
      else if (field === 'FB_FREE') g.free = v;
      else if (field === 'FB_RESERVED') g.reserved = v;
      else if (field === 'FB_TOTAL') g.total = v;
      else if (field === 'GPU_UTIL') g.util = v;
      else if (field === 'GPU_TEMP') g.temp = v;
      else if (HEALTH_FIELDS.has(field)) g.health.set(field, v);
    } else if (n.startsWith('nvidia_smi_')) {
      if (n === 'nvidia_smi_compute_apps_last_collect_success') {
        perProcess = true;
        continue;
      }
      if (n === 'nvidia_smi_compute_app_used_memory_bytes') {
        perProcess = true;
        const pid = num(m.pid);
        if (m.uuid && pid !== null && Number.isInteger(pid) && pid > 0)
          procs.push({ uuid: m.uuid, pid, mib: v === null ? null : Math.round(v / MiB), name: m.process_name ?? null });
        continue;
      }
      if (!m.uuid) continue;
      let g = nv.get(m.uuid);
      if (!g) nv.set(m.uuid, (g = emptyAcc()));
      g.uuid = smiUuid(m.uuid);
      const mib = v === null ? null : Math.round(v / MiB);
      if (n === 'nvidia_smi_gpu_info') {
        g.index = num(m.index);
        g.name = m.name ?? null;
      } else if (n === 'nvidia_smi_memory_used_bytes') g.used = mib;
      else if (n === 'nvidia_smi_memory_free_bytes') g.free = mib;
      else if (n === 'nvidia_smi_memory_reserved_bytes') g.reserved = mib;
      else if (n === 'nvidia_smi_memory_total_bytes') g.total = mib;
      else if (n === 'nvidia_smi_utilization_gpu_ratio') g.util = v === null ? null : Math.round(v * 100);
      else if (n === 'nvidia_smi_temperature_gpu') g.temp = v;
    }
  }
  // nvidia_gpu_exporter wins where both run (it has processes); dcgm-exporter otherwise.
  const useNv = nv.size > 0;
  const accs = [...(useNv ? nv : dcgm).values()];
  const pods: PodHolder[] = useNv
    ? []
    : [...dcgm.entries()].flatMap(([key, g], i) => [...(podsByKey.get(key)?.values() ?? [])].map((p) => ({ gpu: g.index ?? i, ...p })));
  pods.sort((a, b) => a.gpu - b.gpu || `${a.namespace}/${a.pod}`.localeCompare(`${b.namespace}/${b.pod}`));
  // Health comes from dcgm-exporter only; where nvidia_gpu_exporter gives the figures, it joins by UUID.
  const healthByUuid = new Map([...dcgm.values()].filter((g) => g.uuid).map((g) => [g.uuid!, healthOf(g.health)]));
  // MIG instances come from dcgm-exporter only; where nvidia_gpu_exporter gives the figures, they join by UUID as health does.
  const migOfKey = (key: string): MigInstanceStatus[] =>
    [...(migByKey.get(key)?.values() ?? [])].map(migOf).sort((a, b) => (a.gi ?? Infinity) - (b.gi ?? Infinity));
  const migByUuid = new Map([...dcgm.entries()].filter(([, g]) => g.uuid).map(([key, g]) => [g.uuid!, migOfKey(key)]));
  const keyOfAcc = new Map([...dcgm.entries()].map(([key, g]) => [g, key]));
  const gpus: GpuStatus[] = accs
    .map((g, i) => {
      const health = useNv ? (g.uuid ? healthByUuid.get(g.uuid) : undefined) : healthOf(g.health);
      const mig = useNv ? (g.uuid ? (migByUuid.get(g.uuid) ?? []) : []) : migOfKey(keyOfAcc.get(g) ?? '');
      // nvidia-smi's memory.total is used + free + reserved (drivers >= 510); dcgm-exporter has no total by default.
      const total = g.total ?? (g.used !== null && g.free !== null ? g.used + g.free + (g.reserved ?? 0) : null);
      return {
        index: g.index ?? i,
        uuid: g.uuid,
        name: g.name,
        memoryUsedMiB: g.used === null ? null : Math.round(g.used),
        memoryTotalMiB: total === null ? null : Math.round(total),
        utilizationPct: g.util === null ? null : Math.round(g.util),
        temperatureC: g.temp === null ? null : Math.round(g.temp),
        error: null,
        ...(health ? { health } : {}),
        ...(mig.length ? { mig } : {}),
      };
    })
    .sort((a, b) => a.index - b.index);
  const byUuid = new Map(gpus.filter((g) => g.uuid).map((g) => [g.uuid!, g.index]));
  for (const p of procs) p.uuid = smiUuid(p.uuid);
  const processes = useNv
    ? procs
        .map((p) => ({
          gpuIndex: byUuid.get(p.uuid) ?? null,
          pid: p.pid,
          user: null,
          memoryMiB: p.mib,
          command: p.name,
          processName: p.name,
        }))
        .sort((a, b) => (a.gpuIndex ?? -1) - (b.gpuIndex ?? -1) || a.pid - b.pid)
    : [];
  return { exporter: useNv ? 'nvidia_gpu_exporter' : dcgm.size ? 'dcgm' : null, gpus, processes, perProcess: useNv && perProcess, pods };
}

/** node_exporter's meminfo series of ONE host at one instant as host memory, or null without MemTotal. */
export function memoryOf(series: readonly { metric: Record<string, string>; v: number | null }[]): HostMemory | null {
  const f = new Map<string, number | null>();
  for (const { metric, v } of series) {
    const m = /^node_memory_(\w+)_bytes$/.exec(nameOf(metric));
    if (m) f.set(m[1], v);
  }
  const total = f.get('MemTotal');
  if (total === undefined || total === null) return null;
  const available = f.get('MemAvailable') ?? null;
  const free = f.get('MemFree') ?? null;
  const buffers = f.get('Buffers') ?? null;
  const cached = f.get('Cached') ?? null;
  // `free`'s used: total - free - buff/cache; where a field is missing, total - available.
  const used = free !== null && buffers !== null && cached !== null ? total - free - buffers - cached : available !== null ? total - available : null;
  const swapTotal = f.get('SwapTotal') ?? null;
  const swapFree = f.get('SwapFree') ?? null;
  return {
    totalBytes: total,
    usedBytes: used,
    availableBytes: available,
    swapTotalBytes: swapTotal,
    swapUsedBytes: swapTotal !== null && swapFree !== null ? swapTotal - swapFree : null,
  };
}

/** The line a host's status carries when its exporters give no per-process data. */
export function perProcessWarning(r: HostGpuReading): Message | undefined {
  if (r.exporter === 'dcgm' && r.pods.length)
    return message('reason.prom.pods', {
      pods: r.pods.map((p) => `GPU ${p.gpu} ${p.namespace ? `${p.namespace}/` : ''}${p.pod}${p.container ? ` (container ${p.container})` : ''}`).join(', '),
    });
  if (r.exporter === 'dcgm') return message('reason.prom.dcgmWhole');
  if (r.exporter === 'nvidia_gpu_exporter' && !r.perProcess) return message('reason.prom.noComputeApps');
  return undefined;
}

/** Instant-query results grouped by host (only the hosts asked for). */
export function groupByHost(
  result: readonly PromVectorSample[],
  hosts: readonly PromHost[],
  label: string,
  stripPort: boolean,
): Map<string, { metric: Record<string, string>; v: number | null }[]> {
  const byMatch = new Map<string, string[]>();
  for (const h of hosts) byMatch.set(h.match, [...(byMatch.get(h.match) ?? []), h.name]);
  const out = new Map<string, { metric: Record<string, string>; v: number | null }[]>();
  for (const s of result) {
    const key = hostKeyOf(s.metric, label, stripPort);
    for (const name of (key !== null && byMatch.get(key)) || []) {
      let a = out.get(name);
      if (!a) out.set(name, (a = []));
      a.push({ metric: s.metric, v: num(s.value?.[1]) });
    }
  }
  return out;
}

// ---- history (query_range) -> watch samples ----

/**
 * Range-query matrices of the hosts as the samples the sampler would have stored: one GPU sample per
 * GPU per step, one host RAM sample per step, and per process (nvidia_gpu_exporter with compute apps) a
 * process sample. A process's start is taken as the first step its series appears in (Prometheus keeps
 * no start time); a pid that reappears after a gap of more than `gapS` is taken as a new process.
 */
export function historySamples(
  gpuSeries: readonly PromMatrixSeries[],
  nodeSeries: readonly PromMatrixSeries[],
  hosts: readonly PromHost[],
  join: JoinConfig,
  gapS = 600,
): Sample[] {
  const out: Sample[] = [];
  // Per host, per timestamp: the instant view, then the same readers as `status`.
  const perHostTs = (series: readonly PromMatrixSeries[], label: string) => {
    const m = new Map<string, Map<number, { metric: Record<string, string>; v: number | null }[]>>();
    const byMatch = new Map<string, string[]>();
    for (const h of hosts) byMatch.set(h.match, [...(byMatch.get(h.match) ?? []), h.name]);
    for (const s of series) {
      const key = hostKeyOf(s.metric, label, join.stripPort);
      for (const name of (key !== null && byMatch.get(key)) || []) {
        let t = m.get(name);
        if (!t) m.set(name, (t = new Map<number, { metric: Record<string, string>; v: number | null }[]>()));
        for (const [ts, val] of s.values) {
          let a = t.get(ts);
          if (!a) t.set(ts, (a = []));
          a.push({ metric: s.metric, v: num(val) });
        }
      }
    }
    return m;
  };
  for (const [host, byTs] of perHostTs(gpuSeries, join.gpuLabel)) {
    const seen = new Map<string, { start: number; last: number }>();
    for (const ts of [...byTs.keys()].sort((a, b) => a - b)) {
      const r = gpusOf(byTs.get(ts)!);
      const iso = new Date(ts * 1000).toISOString();
      const withProcs = new Set<number>();
      for (const p of r.processes) {
        const g = r.gpus.find((x) => x.index === p.gpuIndex);
        if (!g || g.memoryTotalMiB === null || g.memoryUsedMiB === null) continue;
        const key = `${g.index}:${p.pid}`;
        let s = seen.get(key);
        if (!s || ts - s.last > gapS) seen.set(key, (s = { start: ts, last: ts }));
        s.last = ts;
        withProcs.add(g.index);
        const sample: ProcessSample = {
          ts: iso,
          host,
          gpu: g.index,
          gpuTotalMiB: g.memoryTotalMiB,
          gpuUsedMiB: g.memoryUsedMiB,
          utilizationPct: g.utilizationPct,
          pid: p.pid,
          processStart: new Date(s.start * 1000).toISOString(),
          user: '?',
          command: p.processName ?? '',
          processMiB: p.memoryMiB,
        };
        out.push(sample);
      }
      for (const g of r.gpus)
        if (!withProcs.has(g.index) && g.memoryTotalMiB !== null && g.memoryUsedMiB !== null) {
          const sample: GpuSample = {
            ts: iso,
            host,
            gpu: g.index,
            gpuTotalMiB: g.memoryTotalMiB,
            gpuUsedMiB: g.memoryUsedMiB,
            utilizationPct: g.utilizationPct,
          };
          out.push(sample);
        }
    }
  }
  for (const [host, byTs] of perHostTs(nodeSeries, join.nodeLabel)) {
    for (const ts of [...byTs.keys()].sort((a, b) => a - b)) {
      const mem = memoryOf(byTs.get(ts)!);
      if (!mem || mem.availableBytes === null) continue;
      const sample: HostRamSample = {
        ts: new Date(ts * 1000).toISOString(),
        host,
        kind: 'host',
        memTotalBytes: mem.totalBytes,
        memAvailableBytes: mem.availableBytes,
      };
      out.push(sample);
    }
  }
  return out;
}
