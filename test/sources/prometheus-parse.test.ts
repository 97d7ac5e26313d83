// The pure half of the Prometheus source: real exporter output (test/fixtures/prometheus, see its
// README) as instant-query results -> the status / mem shapes, range results -> watch samples, and the
// PromQL text (escaping, host matchers, the step under 11,000 points).
import { describe, expect, it } from 'vitest';
import { english } from '../../src/core/message.js';
import {
  checkMatrix,
  checkVector,
  chooseStep,
  gpuQuery,
  gpusOf,
  groupByHost,
  healthOf,
  historySamples,
  hostKeyOf,
  malformedList,
  memoryOf,
  nodeQuery,
  perProcessWarning,
  promString,
  regexLiteral,
  type PromMatrixSeries,
} from '../../src/sources/prometheus/parse.js';
import { healthFindings } from '../../src/readings/nvidia-smi-health.js';
import { exposition, fixtureText } from './exposition.js';

const join = { gpuLabel: 'instance', nodeLabel: 'instance', stripPort: true };
const dcgm = () => exposition(fixtureText('dcgm-exporter-a100.prom'), { instance: '10.0.0.5:9400', job: 'dcgm' });
const nvgpu = () => exposition(fixtureText('nvidia-gpu-exporter-h100.prom'), { instance: '10.0.0.6:9835', job: 'nvgpu' });
const node = (instance: string) => exposition(fixtureText('node-exporter-e2e-memory.prom'), { instance, job: 'node' });
const values = (s: ReturnType<typeof dcgm>) => s.map((x) => ({ metric: x.metric, v: Number(x.value[1]) }));

describe('dcgm-exporter (NVIDIA docs sample, A100)', () => {
  it('reads FB_USED / FB_FREE in MiB per gpu with UUID, and says it has no per-process data', () => {
    const r = gpusOf(values(dcgm()));
    expect(r.exporter).toBe('dcgm');
    expect(r.gpus).toEqual([
      {
        index: 0,
        uuid: 'GPU-34319582-d595-d1c7-d1d2-179bcfa61660',
        name: null,
        memoryUsedMiB: 4845,
        memoryTotalMiB: 4845 + 35690,
        utilizationPct: null,
        temperatureC: 61,
        error: null,
        // The sample's DCGM_FI_DEV_POWER_USAGE and DCGM_FI_DEV_XID_ERRORS; the other health fields are not in it.
        health: {
          powerDrawW: 409.692,
          powerLimitW: null,
          eccUncorrectedVolatile: null,
          retiredPagesPending: null,
          remappedRowsPending: null,
          remappedRowsFailure: null,
          clockReasons: null,
          lastXid: 0,
        },
      },
    ]);
    expect(r.processes).toEqual([]);
    expect(english(perProcessWarning(r)!)).toMatch(/no per-process data: dcgm-exporter/);
  });

  it('a GPU whose dcgm-exporter reports a hardware Xid, double-bit ECC errors or a row remap is flagged (synthetic values on the real series)', () => {
    // Synthetic: the A100 sample's series with XID_ERRORS set to 79 (fallen off the bus) and the health fields
    // the sample lacks added (POWER_MGMT_LIMIT 400 W, ECC_DBE_VOL_TOTAL 2, ROW_REMAP_PENDING 1, ROW_REMAP_FAILURE 0, RETIRED_PENDING 0).
    const labels = { gpu: '0', UUID: 'GPU-34319582-d595-d1c7-d1d2-179bcfa61660', instance: '10.0.0.5:9400' };
    const s = values(dcgm()).map((x) => (x.metric.__name__ === 'DCGM_FI_DEV_XID_ERRORS' ? { ...x, v: 79 } : x));
    for (const [name, v] of [
      ['POWER_MGMT_LIMIT', 400],
      ['ECC_DBE_VOL_TOTAL', 2],
      ['ROW_REMAP_PENDING', 1],
      ['ROW_REMAP_FAILURE', 0],
      ['RETIRED_PENDING', 0],
    ] as const)
      s.push({ metric: { __name__: `DCGM_FI_DEV_${name}`, ...labels }, v });
    const g = gpusOf(s).gpus[0];
    expect(g.health).toEqual({
      powerDrawW: 409.692,
      powerLimitW: 400,
      eccUncorrectedVolatile: 2,
      retiredPagesPending: false,
      remappedRowsPending: true,
      remappedRowsFailure: false,
      clockReasons: null,
      lastXid: 79,
    });
    expect(healthFindings(g.health)).toEqual(['remap_pending', 'ecc_uncorrected', 'xid']);
    // A MIG instance's series (its GPU is known by the instance, issue 25), and a GPU without any health series: no health.
    const [byInstance] = gpusOf([{ metric: { __name__: 'DCGM_FI_DEV_XID_ERRORS', ...labels, GPU_I_ID: '1' }, v: 79 }]).gpus;
    expect(byInstance.health).toBeUndefined();
    expect(byInstance.mig?.map((m) => m.gi)).toEqual([1]);
    expect(gpusOf([{ metric: { __name__: 'DCGM_FI_DEV_FB_USED', ...labels }, v: 1 }]).gpus[0].health).toBeUndefined();
    expect(healthOf(new Map([['POWER_USAGE', -1]]))?.powerDrawW).toBeNull();
  });

  it('status asks for the health fields; the watch history does not', () => {
    const hosts = [{ name: 'a', match: '10.0.0.5' }];
    expect(gpuQuery(hosts, join, { health: true })).toContain(
      'POWER_USAGE|POWER_MGMT_LIMIT|XID_ERRORS|ECC_DBE_VOL_TOTAL|RETIRED_PENDING|ROW_REMAP_PENDING|ROW_REMAP_FAILURE',
    );
    expect(gpuQuery(hosts, join)).not.toContain('XID_ERRORS');
  });

  it("nvidia_gpu_exporter beside dcgm-exporter: the GPU keeps dcgm-exporter's health, joined by UUID", () => {
    const uuid = '34319582-d595-d1c7-d1d2-179bcfa61660';
    const r = gpusOf([
      { metric: { __name__: 'nvidia_smi_memory_used_bytes', uuid }, v: 2 ** 30 },
      { metric: { __name__: 'DCGM_FI_DEV_POWER_USAGE', gpu: '0', UUID: `GPU-${uuid}` }, v: 250 },
    ]);
    expect(r.exporter).toBe('nvidia_gpu_exporter');
    expect(r.gpus[0].health?.powerDrawW).toBe(250);
    expect(gpusOf([{ metric: { __name__: 'nvidia_smi_memory_used_bytes', uuid }, v: 2 ** 30 }]).gpus[0].health).toBeUndefined();
  });

  it('counts FB_RESERVED into the total as nvidia-smi does, and takes modelName', () => {
    const s: { metric: Record<string, string>; v: number }[] = values(dcgm()).map((x) => ({
      ...x,
      metric: { ...x.metric, modelName: 'NVIDIA A100-SXM4-40GB' },
    }));
    s.push({ metric: { __name__: 'DCGM_FI_DEV_FB_RESERVED', gpu: '0', UUID: 'GPU-34319582-d595-d1c7-d1d2-179bcfa61660', instance: '10.0.0.5:9400' }, v: 429 });
    const g = gpusOf(s).gpus[0];
    expect(g.memoryTotalMiB).toBe(4845 + 35690 + 429);
    expect(g.name).toBe('NVIDIA A100-SXM4-40GB');
  });

  it('joins on Hostname, and on hostname (newer releases) the same way', () => {
    const byHostname = groupByHost(dcgm(), [{ name: 'a100', match: 'ub20-a100-k8s' }], 'Hostname', false);
    expect(byHostname.get('a100')?.length).toBe(17);
    const renamed = dcgm().map((s) => {
      const { Hostname, ...rest } = s.metric;
      return { ...s, metric: { ...rest, hostname: Hostname } };
    });
    expect(groupByHost(renamed, [{ name: 'a100', match: 'ub20-a100-k8s' }], 'Hostname', false).get('a100')?.length).toBe(17);
    expect(gpuQuery([{ name: 'a100', match: 'ub20-a100-k8s' }], { ...join, gpuLabel: 'Hostname' })).toContain(' or ');
  });
});

describe('nvidia_gpu_exporter (its H100 integration testdata, with compute apps)', () => {
  it('reads bytes as MiB, index and name from nvidia_smi_gpu_info, utilisation ratio as percent', () => {
    const r = gpusOf(values(nvgpu()));
    expect(r.exporter).toBe('nvidia_gpu_exporter');
    expect(r.gpus).toEqual([
      {
        index: 0,
        uuid: 'GPU-00000000-0000-0000-0000-000000000000',
        name: 'NVIDIA H100 80GB HBM3',
        memoryUsedMiB: 19818,
        memoryTotalMiB: 81559,
        utilizationPct: 100,
        temperatureC: 59,
        error: null,
      },
    ]);
    expect(perProcessWarning(r)).toBeUndefined();
  });

  it('reads per-process memory joined to the GPU by uuid', () => {
    const r = gpusOf(values(nvgpu()));
    expect(r.processes.map((p) => [p.gpuIndex, p.pid, p.memoryMiB, p.processName])).toEqual([
      [0, 11327, 2566, '/root/tools/memhog'],
      [0, 11328, 1542, '/root/tools/memhog'],
      [0, 11345, 15690, './gpu_burn'],
    ]);
    expect(r.processes.every((p) => p.user === null)).toBe(true);
  });

  it('without --collect.compute-apps it says so and stays device-level', () => {
    const s = values(nvgpu()).filter((x) => !/compute_app/.test(x.metric.__name__));
    const r = gpusOf(s);
    expect(r.processes).toEqual([]);
    expect(english(perProcessWarning(r)!)).toMatch(/--collect\.compute-apps/);
  });
});

describe('node_exporter (its e2e fixture)', () => {
  it('reads MemTotal, free-style used and swap; no MemAvailable means available unknown, not 0', () => {
    const m = memoryOf(values(node('10.0.0.5:9100')));
    expect(m).toEqual({
      totalBytes: 3831959552,
      usedBytes: 3831959552 - 230883328 - 22568960 - 953229312,
      availableBytes: null,
      swapTotalBytes: 4294963200,
      swapUsedBytes: 4294963200 - 3231088640,
    });
  });

  it('with MemAvailable, available is read', () => {
    const s = values(node('10.0.0.5:9100'));
    s.push({ metric: { __name__: 'node_memory_MemAvailable_bytes', instance: '10.0.0.5:9100' }, v: 1.2e9 });
    expect(memoryOf(s)?.availableBytes).toBe(1.2e9);
  });
});

describe('the label join', () => {
  it('exporters on different ports of one host join on instance without the port', () => {
    const all = [...dcgm(), ...node('10.0.0.5:9100'), ...node('10.0.0.6:9100'), ...nvgpu()];
    const hosts = [
      { name: 'gpu5', match: '10.0.0.5' },
      { name: 'gpu6', match: '10.0.0.6' },
    ];
    const g = groupByHost(all, hosts, 'instance', true);
    expect(gpusOf(g.get('gpu5')!).exporter).toBe('dcgm');
    expect(gpusOf(g.get('gpu6')!).exporter).toBe('nvidia_gpu_exporter');
    expect(memoryOf(g.get('gpu6')!)?.totalBytes).toBe(3831959552);
    // With strip_port off the values must match exactly.
    expect(groupByHost(all, hosts, 'instance', false).size).toBe(0);
  });

  it('cuts the port off host:port and [v6]:port, not off a bare IPv6 address', () => {
    expect(hostKeyOf({ instance: 'gpu5.lab:9100' }, 'instance', true)).toBe('gpu5.lab');
    expect(hostKeyOf({ instance: '[fd00::5]:9400' }, 'instance', true)).toBe('fd00::5');
    expect(hostKeyOf({ instance: 'fd00::5' }, 'instance', true)).toBe('fd00::5');
    expect(hostKeyOf({ job: 'x' }, 'instance', true)).toBeNull();
  });
});

describe('PromQL text', () => {
  it('escapes string literals and regex metacharacters', () => {
    expect(promString('a"b\\c\nd')).toBe('"a\\"b\\\\c\\nd"');
    expect(regexLiteral('10.0.0.5')).toBe('10\\.0\\.0\\.5');
    expect(regexLiteral('a|b(c)*')).toBe('a\\|b\\(c\\)\\*');
  });

  it('puts only validated, escaped host values in the matcher', () => {
    const q = nodeQuery([{ name: 'gpu5', match: '10.0.0.5' }], join);
    expect(q).toBe(
      '{__name__=~"node_memory_(MemTotal|MemAvailable|MemFree|Buffers|Cached|SwapTotal|SwapFree)_bytes",instance=~"(10\\\\.0\\\\.0\\\\.5)(:[0-9]{1,5})?"}',
    );
    expect(() => nodeQuery([{ name: 'x', match: 'a"} or vector(1) #' }], join)).toThrow(/not a host match value/);
    expect(() => gpuQuery([{ name: 'x', match: 'ok' }], { ...join, gpuLabel: 'in stance' })).toThrow(/not a label name/);
  });

  it('chooses a step that keeps every series under 11,000 points', () => {
    expect(chooseStep(0, 72 * 3600, 60)).toBe(60);
    expect(chooseStep(0, 30 * 86400, 15)).toBe(236);
    expect((30 * 86400) / chooseStep(0, 30 * 86400, 15)).toBeLessThanOrEqual(11_000);
    expect(chooseStep(0, 0, 0)).toBe(1);
  });
});

describe('history (query_range) -> watch samples', () => {
  const matrix = (samples: ReturnType<typeof dcgm>, steps: number[], grow = 0): PromMatrixSeries[] =>
    samples.map((s) => ({
      metric: s.metric,
      values: steps.map((t, i) => [t, String(Number(s.value[1]) + (/used/i.test(s.metric.__name__) ? grow * i : 0))] as [number, string]),
    }));

  it('gives GPU samples for dcgm, process samples for nvidia_gpu_exporter, host RAM only with MemAvailable', () => {
    const steps = [1000, 1060, 1120];
    const nodeSamples = node('10.0.0.5:9100');
    nodeSamples.push({ metric: { __name__: 'node_memory_MemAvailable_bytes', instance: '10.0.0.5:9100', job: 'node' }, value: [0, '1200000000'] });
    const samples = historySamples(
      [...matrix(dcgm(), steps, 10), ...matrix(nvgpu(), steps)],
      [...matrix(nodeSamples, steps), ...matrix(node('10.0.0.6:9100'), steps)],
      [
        { name: 'gpu5', match: '10.0.0.5' },
        { name: 'gpu6', match: '10.0.0.6' },
      ],
      join,
    );
    const gpu5 = samples.filter((s) => s.host === 'gpu5' && s.kind !== 'host');
    expect(gpu5.map((s) => (s.kind === 'host' ? 0 : s.gpuUsedMiB))).toEqual([4845, 4855, 4865]);
    const procs = samples.filter((s) => s.host === 'gpu6' && 'pid' in s && s.pid !== undefined);
    expect(procs.length).toBe(9);
    expect(new Set(procs.map((p) => ('processStart' in p ? p.processStart : '')))).toEqual(new Set([new Date(1_000_000).toISOString()]));
    const ram = samples.filter((s) => s.kind === 'host');
    expect(ram.map((s) => s.host)).toEqual(['gpu5', 'gpu5', 'gpu5']);
  });
});

describe('an answer item by item: a malformed item is skipped and named, never thrown on', () => {
  const good = { metric: { __name__: 'DCGM_FI_DEV_FB_USED', instance: '10.0.0.5:9400', gpu: '0' }, value: [1, '42'] };

  it('keeps good items and names each bad one, with its host where its join label says it', () => {
    const { samples, malformed } = checkVector(
      [
        good,
        null,
        7,
        [good],
        { metric: null, value: [1, '1'] },
        { metric: ['x'], value: [1, '1'] },
        { metric: { instance: '10.0.0.6:9100', gpu: { x: 1 } }, value: [1, '1'] },
        { metric: { instance: '10.0.0.7:9100' }, value: [1, 2] },
        { metric: { instance: '10.0.0.8' }, value: ['1', '2'] },
        { metric: { instance: 7 }, value: [1, '1'] },
        { metric: { instance: '10.0.0.9:1' }, value: [Infinity, '1'] },
        { metric: { instance: '10.0.0.9:1' }, value: [1, '1', '2'] },
        { metric: { instance: '10.0.0.9:1' } },
        { metric: {}, value: [1, 'NaN'] },
      ],
      'instance',
      true,
    );
    expect(samples).toEqual([good, { metric: {}, value: [1, 'NaN'] }]);
    expect(malformed).toEqual([
      { index: 1, what: 'item is null', hostKey: null },
      { index: 2, what: 'item is number', hostKey: null },
      { index: 3, what: 'item is array', hostKey: null },
      { index: 4, what: 'metric is null', hostKey: null },
      { index: 5, what: 'metric is array', hostKey: null },
      { index: 6, what: 'label gpu is object', hostKey: '10.0.0.6' },
      { index: 7, what: 'value is array', hostKey: '10.0.0.7' },
      { index: 8, what: 'value is array', hostKey: '10.0.0.8' },
      { index: 9, what: 'label instance is number', hostKey: null },
      { index: 10, what: 'value is array', hostKey: '10.0.0.9' },
      { index: 11, what: 'value is array', hostKey: '10.0.0.9' },
      { index: 12, what: 'value is undefined', hostKey: '10.0.0.9' },
    ]);
  });

  it('reads the host of a bad item on either spelling of Hostname, port kept when strip_port is off', () => {
    const bad = (metric: Record<string, unknown>) => checkVector([{ metric, value: null }], 'Hostname', false).malformed[0].hostKey;
    expect(bad({ Hostname: 'node-a:9400' })).toBe('node-a:9400');
    expect(bad({ hostname: 'node-b' })).toBe('node-b');
    expect(bad({ Hostname: 5, hostname: 'node-c' })).toBe('node-c');
    expect(checkVector([{ metric: { instance: 'a:1' }, value: null }], 'instance', true).malformed[0].hostKey).toBe('a');
  });

  it('a long label name is cut in the line', () => {
    const { malformed } = checkVector([{ metric: { ['l'.repeat(100)]: 1 }, value: [1, '1'] }], 'instance', true);
    expect(malformed[0].what).toBe(`label ${'l'.repeat(40)} is number`);
  });

  it('range answers: a bad series is skipped, a bad point dropped and counted on its series', () => {
    const { series, malformed } = checkMatrix(
      [
        { metric: { instance: '10.0.0.5:9400' }, values: [[1, '1'], null, [2, 2], [3, '3']] },
        { metric: { instance: '10.0.0.6:9400' }, values: [[1, '1']] },
        { metric: { instance: '10.0.0.7:9400' }, values: null },
        { metric: { instance: '10.0.0.8:9400' }, values: 'x' },
        { metric: null, values: [] },
        null,
        'x',
        [],
      ],
      'instance',
      true,
    );
    expect(series).toEqual([
      {
        metric: { instance: '10.0.0.5:9400' },
        values: [
          [1, '1'],
          [3, '3'],
        ],
      },
      { metric: { instance: '10.0.0.6:9400' }, values: [[1, '1']] },
    ]);
    expect(malformed).toEqual([
      { index: 0, what: '2 points are not [time, "value"]', hostKey: '10.0.0.5' },
      { index: 2, what: 'values is null', hostKey: '10.0.0.7' },
      { index: 3, what: 'values is string', hostKey: '10.0.0.8' },
      { index: 4, what: 'metric is null', hostKey: null },
      { index: 5, what: 'item is null', hostKey: null },
      { index: 6, what: 'item is string', hostKey: null },
      { index: 7, what: 'item is array', hostKey: null },
    ]);
  });

  it('names the first three skipped items and counts the rest', () => {
    const items = [0, 1, 2, 3, 4].map((index) => ({ index, what: `w${index}`, hostKey: null }));
    expect(malformedList(items.slice(0, 1))).toBe('#0: w0');
    expect(malformedList(items.slice(0, 3))).toBe('#0: w0, #1: w1, #2: w2');
    expect(malformedList(items.slice(0, 4))).toBe('#0: w0, #1: w1, #2: w2, +1');
    expect(malformedList(items)).toBe('#0: w0, #1: w1, #2: w2, +2');
    expect(malformedList([])).toBe('');
  });

  it('[v6]:port and [v6] lose their brackets; a bracket that does not close the value stays', () => {
    expect(hostKeyOf({ instance: '[fd00::5]' }, 'instance', true)).toBe('fd00::5');
    expect(hostKeyOf({ instance: '[fd00::5]:x' }, 'instance', true)).toBe('[fd00::5]:x');
    expect(hostKeyOf({ instance: '[]:9100' }, 'instance', true)).toBe('[]');
    expect(hostKeyOf({ instance: '[a]b]:1' }, 'instance', true)).toBe('a]b');
    expect(hostKeyOf({ instance: 'x[a]' }, 'instance', true)).toBe('x[a]');
    expect(hostKeyOf({ instance: '[fd00::5]:9400' }, 'instance', false)).toBe('[fd00::5]:9400');
    expect(hostKeyOf({ instance: '' }, 'instance', true)).toBeNull();
    // ']' many times: one pass, no backtracking.
    const hostile = '[' + ']'.repeat(200_000) + ':x';
    expect(hostKeyOf({ instance: hostile }, 'instance', true)).toBe(hostile);
  });
});
