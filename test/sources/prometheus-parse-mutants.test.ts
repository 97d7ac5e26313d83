// The Prometheus parser (src/sources/prometheus/parse.ts) on small hand-made answers, each built to show one
// rule of the reading: PromQL escaping of control characters and host alternatives, the port cut, GPU and process
// series of both exporters (validation, ordering, derived totals), node_exporter's used memory and swap, the
// per-process warning, and history samples (time order, process restarts after a gap). Written against the
// mutants Stryker found alive (npm run test:mutation); test/sources/prometheus-parse.test.ts reads real exporter output.
import { describe, expect, it } from 'vitest';
import { message } from '../../src/core/message.js';
import {
  chooseStep,
  gpuQuery,
  gpusOf,
  groupByHost,
  historySamples,
  hostKeyOf,
  memoryOf,
  nodeQuery,
  perProcessWarning,
  promString,
  type PromMatrixSeries,
} from '../../src/sources/prometheus/parse.js';

const MiB = 2 ** 20;
const join = { gpuLabel: 'instance', nodeLabel: 'instance', stripPort: true };
const series = (name: string, labels: Record<string, string>, v: number | null) => ({ metric: { __name__: name, ...labels }, v });

describe('PromQL text', () => {
  it('escapes carriage returns, tabs and other control characters', () => {
    expect(promString('a\rb\tc\x01d\x7fe')).toBe('"a\\rb\\tc\\x01d\\x7fe"');
    expect(promString('\n"')).toBe('"\\n\\""');
  });

  it('matches any of several hosts, with a port only when ports are cut', () => {
    const hosts = [
      { name: 'a', match: 'gpu-a' },
      { name: 'b', match: 'gpu-b' },
    ];
    expect(nodeQuery(hosts, join)).toContain('instance=~"(gpu-a|gpu-b)(:[0-9]{1,5})?"');
    expect(nodeQuery(hosts, { ...join, stripPort: false })).toContain('instance=~"(gpu-a|gpu-b)"}');
  });

  it('names a bad label cut to 40 characters', () => {
    const label = 'bad label ' + 'x'.repeat(100);
    expect(() => gpuQuery([{ name: 'a', match: 'a' }], { ...join, gpuLabel: label })).toThrow(`not a label name: ${label.slice(0, 40)}`);
    expect(() => gpuQuery([{ name: 'a', match: 'a' }], { ...join, gpuLabel: label })).not.toThrow(label.slice(0, 41));
  });

  it('asks for both spellings of dcgm-exporter’s host label, whichever is configured', () => {
    for (const gpuLabel of ['Hostname', 'hostname']) {
      const q = gpuQuery([{ name: 'a', match: 'node-a' }], { ...join, gpuLabel });
      expect(q).toContain('Hostname=~');
      expect(q).toContain('hostname=~');
    }
    expect(hostKeyOf({ Hostname: 'node-a' }, 'hostname', false)).toBe('node-a');
  });

  it('the step depends on the length of the range, not on where it starts', () => {
    const start = 1_700_000_000;
    expect(chooseStep(start, start + 72 * 3600, 60)).toBe(chooseStep(0, 72 * 3600, 60));
    expect(chooseStep(start, start + 72 * 3600, 60)).toBe(60);
  });
});

describe('the port cut', () => {
  it('cuts only a whole :port at the end', () => {
    expect(hostKeyOf({ instance: '[fd00::5]x:9100' }, 'instance', true)).toBe('[fd00::5]x:9100');
    expect(hostKeyOf({ instance: '[fd00::5]:9100x' }, 'instance', true)).toBe('[fd00::5]:9100x');
    expect(hostKeyOf({ instance: 'gpu5:9100x' }, 'instance', true)).toBe('gpu5:9100x');
    expect(hostKeyOf({ instance: 'gpu5:123456' }, 'instance', true)).toBe('gpu5:123456');
    expect(hostKeyOf({ instance: 'gpu5:65535' }, 'instance', true)).toBe('gpu5');
  });
});

describe('nvidia_gpu_exporter series', () => {
  const u0 = '00000000-0000-0000-0000-00000000000a';
  const u1 = '00000000-0000-0000-0000-00000000000b';
  const reading = () =>
    gpusOf([
      // GPU index 1 is listed first: GPUs come out in index order.
      series('nvidia_smi_gpu_info', { uuid: u1, index: '1', name: 'H100' }, 1),
      series('nvidia_smi_memory_used_bytes', { uuid: u1 }, 1000 * MiB),
      series('nvidia_smi_memory_free_bytes', { uuid: u1 }, 3000 * MiB),
      series('nvidia_smi_memory_reserved_bytes', { uuid: u1 }, 24 * MiB),
      series('nvidia_smi_utilization_gpu_ratio', { uuid: u1 }, 0.505),
      series('nvidia_smi_temperature_gpu', { uuid: u1 }, 40.6),
      series('nvidia_smi_gpu_info', { uuid: u0, index: '0', name: 'H100' }, 1),
      series('nvidia_smi_memory_used_bytes', { uuid: u0 }, null),
      series('nvidia_smi_memory_total_bytes', { uuid: u0 }, 8000 * MiB),
      series('nvidia_smi_compute_app_used_memory_bytes', { uuid: u1, pid: '300', process_name: 'python' }, 512 * MiB),
      series('nvidia_smi_compute_app_used_memory_bytes', { uuid: u1, pid: '200' }, null),
      series('nvidia_smi_compute_app_used_memory_bytes', { uuid: u0, pid: '100', process_name: 'train' }, 10 * MiB),
      series('nvidia_smi_compute_app_used_memory_bytes', { uuid: 'ffffffff-0000-0000-0000-000000000000', pid: '50', process_name: 'x' }, MiB),
      // Not processes: no pid, pid 0, a negative or fractional pid, no uuid.
      series('nvidia_smi_compute_app_used_memory_bytes', { uuid: u0 }, MiB),
      series('nvidia_smi_compute_app_used_memory_bytes', { uuid: u0, pid: '0' }, MiB),
      series('nvidia_smi_compute_app_used_memory_bytes', { uuid: u0, pid: '-7' }, MiB),
      series('nvidia_smi_compute_app_used_memory_bytes', { uuid: u0, pid: '1.5' }, MiB),
      series('nvidia_smi_compute_app_used_memory_bytes', { pid: '77' }, MiB),
      // Not a GPU: no uuid.
      series('nvidia_smi_memory_used_bytes', {}, MiB),
    ]);

  it('reads each GPU by uuid: total from used + free + reserved, ratio as percent, rounded, unknowns null', () => {
    const r = reading();
    expect(r.exporter).toBe('nvidia_gpu_exporter');
    expect(r.gpus).toEqual([
      {
        index: 0,
        uuid: `GPU-${u0}`,
        name: 'H100',
        memoryUsedMiB: null,
        memoryTotalMiB: 8000,
        utilizationPct: null,
        temperatureC: null,
        error: null,
      },
      {
        index: 1,
        uuid: `GPU-${u1}`,
        name: 'H100',
        memoryUsedMiB: 1000,
        memoryTotalMiB: 1000 + 3000 + 24,
        utilizationPct: 51,
        temperatureC: 41,
        error: null,
      },
    ]);
  });

  it('reads processes with a positive whole pid, by GPU then pid, an unknown GPU first', () => {
    const r = reading();
    expect(r.perProcess).toBe(true);
    expect(r.processes.map((p) => [p.gpuIndex, p.pid, p.memoryMiB, p.command])).toEqual([
      [null, 50, 1, 'x'],
      [0, 100, 10, 'train'],
      [1, 200, null, null],
      [1, 300, 512, 'python'],
    ]);
    expect(r.processes.every((p) => p.user === null)).toBe(true);
  });

  it('the compute-apps success series alone says processes are collected; without it, the warning says they are not', () => {
    const gpu = series('nvidia_smi_memory_used_bytes', { uuid: u0 }, MiB);
    const collected = gpusOf([gpu, series('nvidia_smi_compute_apps_last_collect_success', {}, 1)]);
    expect(collected.perProcess).toBe(true);
    expect(collected.gpus).toHaveLength(1);
    expect(perProcessWarning(collected)).toBeUndefined();
    const notCollected = gpusOf([gpu]);
    expect(notCollected.perProcess).toBe(false);
    expect(perProcessWarning(notCollected)).toEqual(message('reason.prom.noComputeApps'));
    expect(perProcessWarning(gpusOf([]))).toBeUndefined();
  });

  it('only a lower-case bare UUID gets the GPU- prefix', () => {
    const uuidOf = (uuid: string) => gpusOf([series('nvidia_smi_memory_used_bytes', { uuid }, MiB)]).gpus[0].uuid;
    expect(uuidOf(u0)).toBe(`GPU-${u0}`);
    expect(uuidOf(`x${u0}`)).toBe(`x${u0}`);
    expect(uuidOf(`${u0}x`)).toBe(`${u0}x`);
  });
});

describe('dcgm-exporter series', () => {
  it('leaves MIG instances out, reads FB_TOTAL and GPU_UTIL, keys a GPU by UUID without a gpu label, indexes it by its place', () => {
    const r = gpusOf([
      series('DCGM_FI_DEV_FB_USED', { gpu: '0', UUID: 'GPU-a' }, 100.4),
      series('DCGM_FI_DEV_FB_TOTAL', { gpu: '0', UUID: 'GPU-a' }, 1000.4),
      series('DCGM_FI_DEV_GPU_UTIL', { gpu: '0', UUID: 'GPU-a' }, 77),
      series('DCGM_FI_DEV_FB_USED', { gpu: '0', UUID: 'GPU-a', GPU_I_ID: '1' }, 5),
      series('DCGM_FI_DEV_FB_USED', { UUID: 'GPU-b' }, 7),
      series('DCGM_FI_DEV_FB_FREE', { UUID: 'GPU-b' }, 3),
      series('DCGM_FI_DEV_GPU_TEMP', { UUID: 'GPU-c' }, 50),
    ]);
    expect(r.exporter).toBe('dcgm');
    expect(r.gpus.map((g) => [g.index, g.uuid, g.memoryUsedMiB, g.memoryTotalMiB, g.utilizationPct, g.temperatureC])).toEqual([
      [0, 'GPU-a', 100, 1000, 77, null],
      [1, 'GPU-b', 7, 10, null, null],
      [2, 'GPU-c', null, null, null, 50],
    ]);
  });

  it('lists the pods holding GPUs by GPU then namespace/pod, without the exporter’s own pod', () => {
    const pod = (gpu: string, labels: Record<string, string>) => series('DCGM_FI_DEV_FB_USED', { gpu, UUID: `GPU-${gpu}`, ...labels }, 1);
    const r = gpusOf([
      pod('1', { pod: 'zeta', namespace: 'ml' }),
      pod('1', { pod: 'alpha', namespace: 'ml', container: 'trainer' }),
      pod('0', { pod: 'beta' }),
      pod('2', { pod: 'gpu-job', container: 'dcgm-exporter' }),
    ]);
    expect(r.pods).toEqual([
      { gpu: 0, namespace: null, pod: 'beta', container: null },
      { gpu: 1, namespace: 'ml', pod: 'alpha', container: 'trainer' },
      { gpu: 1, namespace: 'ml', pod: 'zeta', container: null },
    ]);
    expect(perProcessWarning(r)).toEqual(message('reason.prom.pods', { pods: 'GPU 0 beta, GPU 1 ml/alpha (container trainer), GPU 1 ml/zeta' }));
  });
});

describe('node_exporter memory', () => {
  const mem = (fields: Record<string, number | null>) => memoryOf(Object.entries(fields).map(([f, v]) => series(`node_memory_${f}_bytes`, {}, v)));

  it("used is free's used (total - free - buffers - cached) with all three, else total - available, else unknown", () => {
    expect(mem({ MemTotal: 1000, MemFree: 100, Buffers: 50, Cached: 200, MemAvailable: 600 })?.usedBytes).toBe(650);
    expect(mem({ MemTotal: 1000, MemFree: 100, Buffers: 50, MemAvailable: 600 })?.usedBytes).toBe(400);
    expect(mem({ MemTotal: 1000, MemFree: 100, Cached: 200, MemAvailable: 600 })?.usedBytes).toBe(400);
    expect(mem({ MemTotal: 1000, Buffers: 50, Cached: 200, MemAvailable: 600 })?.usedBytes).toBe(400);
    expect(mem({ MemTotal: 1000, MemFree: 100 })?.usedBytes).toBeNull();
  });

  it('swap used needs both swap figures; no total (or a null one) means no reading', () => {
    expect(mem({ MemTotal: 1000, SwapTotal: 300, SwapFree: 100 })?.swapUsedBytes).toBe(200);
    expect(mem({ MemTotal: 1000, SwapTotal: 300 })?.swapUsedBytes).toBeNull();
    expect(mem({ MemTotal: 1000, SwapFree: 100 })?.swapUsedBytes).toBeNull();
    expect(mem({ MemTotal: null, MemFree: 100 })).toBeNull();
    expect(mem({ MemFree: 100 })).toBeNull();
  });

  it('reads only node_memory_*_bytes series by their whole name', () => {
    const m = memoryOf([
      series('node_memory_MemTotal_bytes', {}, 1000),
      series('node_memory_MemAvailable_bytes', {}, 600),
      // After the real series, so a looser name match would overwrite its figure.
      series('node_memory_MemAvailable_bytes_total', {}, 1),
      series('xnode_memory_MemAvailable_bytes', {}, 2),
    ]);
    expect(m?.availableBytes).toBe(600);
  });
});

describe('grouping by host', () => {
  it('two hosts with one match both get its series', () => {
    const s = { metric: { __name__: 'x', instance: '10.0.0.5:9100' }, value: [1, '3'] as [number, string] };
    const g = groupByHost(
      [s],
      [
        { name: 'a', match: '10.0.0.5' },
        { name: 'b', match: '10.0.0.5' },
      ],
      'instance',
      true,
    );
    expect([...g.keys()]).toEqual(['a', 'b']);
    expect(g.get('b')).toEqual([{ metric: s.metric, v: 3 }]);
  });
});

describe('history samples', () => {
  const u0 = '00000000-0000-0000-0000-00000000000a';
  const hosts = [{ name: 'h', match: '10.0.0.6' }];
  const at = (labels: Record<string, string>, name: string, points: [number, number][]): PromMatrixSeries => ({
    metric: { __name__: name, instance: '10.0.0.6:9835', ...labels },
    values: points.map(([ts, v]) => [ts, String(v)]),
  });

  it('in time order, a pid back after more than the gap is a new process, a GPU with processes has no GPU sample', () => {
    // Points given newest first; the pid is there at 1000, gone at 1060, back at 1660 and at 2261.
    const ts = [2261, 1660, 1060, 1000];
    const gpu = [
      at(
        { uuid: u0, index: '0' },
        'nvidia_smi_gpu_info',
        ts.map((t) => [t, 1]),
      ),
      at(
        { uuid: u0 },
        'nvidia_smi_memory_used_bytes',
        ts.map((t) => [t, 100 * MiB]),
      ),
      at(
        { uuid: u0 },
        'nvidia_smi_memory_total_bytes',
        ts.map((t) => [t, 1000 * MiB]),
      ),
      at({ uuid: u0, pid: '42' }, 'nvidia_smi_compute_app_used_memory_bytes', [
        [2261, 50 * MiB],
        [1660, 50 * MiB],
        [1000, 50 * MiB],
      ]),
    ];
    const node = [
      at({}, 'node_memory_MemTotal_bytes', [
        [2000, 1000],
        [1000, 1000],
      ]),
      at({}, 'node_memory_MemAvailable_bytes', [
        [2000, 400],
        [1000, 600],
      ]),
    ];
    const out = historySamples(gpu, node, hosts, { ...join, stripPort: true });
    const iso = (s: number) => new Date(s * 1000).toISOString();
    expect(out.map((s) => [s.ts, 'pid' in s ? s.pid : 'kind' in s ? s.kind : 'gpu'])).toEqual([
      [iso(1000), 42],
      [iso(1060), 'gpu'],
      [iso(1660), 42],
      [iso(2261), 42],
      [iso(1000), 'host'],
      [iso(2000), 'host'],
    ]);
    const starts = out.filter((s) => 'pid' in s).map((s) => ('processStart' in s ? s.processStart : ''));
    // 1000 -> 1660 is a gap of 660 s (> 600): a new process; 1660 -> 2261 is 601 s: new again.
    expect(starts).toEqual([iso(1000), iso(1660), iso(2261)]);
    const p = out.find((s) => 'pid' in s);
    expect(p).toMatchObject({ host: 'h', gpu: 0, user: '?', command: '', processMiB: 50, gpuTotalMiB: 1000, gpuUsedMiB: 100 });
  });

  it('a gap of exactly the limit is the same process', () => {
    const gpu = [
      at({ uuid: u0, index: '0' }, 'nvidia_smi_gpu_info', [
        [1000, 1],
        [1600, 1],
      ]),
      at({ uuid: u0 }, 'nvidia_smi_memory_used_bytes', [
        [1000, MiB],
        [1600, MiB],
      ]),
      at({ uuid: u0 }, 'nvidia_smi_memory_total_bytes', [
        [1000, MiB],
        [1600, MiB],
      ]),
      at({ uuid: u0, pid: '7', process_name: 'python' }, 'nvidia_smi_compute_app_used_memory_bytes', [
        [1000, MiB],
        [1600, MiB],
      ]),
    ];
    const out = historySamples(gpu, [], hosts, join);
    expect(out.map((s) => ('processStart' in s ? s.processStart : null))).toEqual([new Date(1_000_000).toISOString(), new Date(1_000_000).toISOString()]);
    expect(out.map((s) => ('command' in s ? s.command : null))).toEqual(['python', 'python']);
  });

  it('a GPU or process whose memory is unknown gives no sample', () => {
    const gpu = [
      at({ uuid: u0, index: '0' }, 'nvidia_smi_gpu_info', [[1000, 1]]),
      at({ uuid: u0 }, 'nvidia_smi_memory_total_bytes', [[1000, MiB]]),
      at({ uuid: u0, pid: '7' }, 'nvidia_smi_compute_app_used_memory_bytes', [[1000, MiB]]),
    ];
    expect(historySamples(gpu, [], hosts, join)).toEqual([]);
    const usedOnly = [at({ uuid: u0, index: '0' }, 'nvidia_smi_gpu_info', [[1000, 1]]), at({ uuid: u0 }, 'nvidia_smi_memory_used_bytes', [[1000, MiB]])];
    expect(historySamples(usedOnly, [], hosts, join)).toEqual([]);
  });
});
