// The leak detector, unchanged, on history read from a real Prometheus with query_range. The history is
// SYNTHETIC: the seeded training-job generator of the watch tests (test/watch/generator.ts: 12 hours of
// a job whose memory starts creeping 50 MiB/h after 2 hours) written as nvidia_gpu_exporter series
// (its metric names and labels, as in test/fixtures/prometheus/nvidia-gpu-exporter-h100.prom) and
// loaded into the TSDB with `promtool tsdb create-blocks-from openmetrics`, then read back by the
// service as a `source: prometheus` host.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { PromClient } from '../../src/sources/prometheus/client.js';
import type { PrometheusHostSource } from '../../src/sources/prometheus/hosts.js';
import { chooseStep } from '../../src/sources/prometheus/parse.js';
import { findingsFromStore } from '../../src/watch/findings.js';
import { toMs } from '../../src/watch/series.js';
import { isHostSample, isProcessSample, type Sample } from '../../src/watch/types.js';
import { buildSamples, prng, trainingProcess } from '../watch/generator.js';
import { describeWithPrometheus, PROMTOOL, startPrometheus, type PrometheusInstance } from './prometheus-harness.js';
import { tempWatchStore, withSqliteRegistry } from '../storage/sqlite-stores.js';

const H = 3_600_000;
const UUID = '00000000-0000-0000-0000-000000000000';
const INSTANCE = '127.0.0.3:9835';

/** Generator samples as nvidia_gpu_exporter series in OpenMetrics (what promtool imports). */
function openMetrics(samples: Sample[]): string {
  const lines = new Map<string, string[]>();
  const add = (family: string, labels: string, v: number, ts: number) => {
    let a = lines.get(family);
    if (!a) lines.set(family, (a = []));
    a.push(`${family}{${labels}} ${v} ${(ts / 1000).toFixed(3)}`);
  };
  const base = `instance="${INSTANCE}",job="nvidia_gpu",uuid="${UUID}"`;
  const seenGpuTs = new Set<number>();
  for (const s of samples) {
    if (isHostSample(s)) continue;
    const ts = toMs(s.ts);
    if (!seenGpuTs.has(ts)) {
      seenGpuTs.add(ts);
      add('nvidia_smi_gpu_info', `${base},index="0",name="NVIDIA H100 80GB HBM3"`, 1, ts);
      add('nvidia_smi_memory_used_bytes', base, s.gpuUsedMiB * 2 ** 20, ts);
      add('nvidia_smi_memory_total_bytes', base, s.gpuTotalMiB * 2 ** 20, ts);
      add('nvidia_smi_utilization_gpu_ratio', base, (s.utilizationPct ?? 0) / 100, ts);
      add('nvidia_smi_compute_apps_last_collect_success', `instance="${INSTANCE}",job="nvidia_gpu"`, 1, ts);
    }
    if (isProcessSample(s) && s.processMiB !== null)
      add('nvidia_smi_compute_app_used_memory_bytes', `${base},pid="${s.pid}",process_name="${s.command}"`, s.processMiB * 2 ** 20, ts);
  }
  const out: string[] = [];
  for (const [family, ls] of lines) out.push(`# TYPE ${family} gauge`, ...ls);
  return out.join('\n') + '\n# EOF\n';
}

describeWithPrometheus('leak detector on Prometheus history', 'test/sources/prometheus-history.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-promhist-'));
  let prom: PrometheusInstance;
  let svc: SourcedHostsService;
  const end = Math.floor(Date.now() / 60_000) * 60_000 - 5 * 60_000;
  const t0 = end - 12 * H;

  beforeAll(async () => {
    if (!PROMTOOL) throw new Error('promtool not found (it ships in the prometheus package)');
    const rnd = prng(7);
    const samples = buildSamples(
      {
        host: 'gpu1',
        t0,
        hours: 12,
        gpuTotalMiB: 81559,
        procs: [
          trainingProcess(
            { gpu: 0, pid: 4242, user: 'alice', command: 'python train.py', toMs: end + H },
            { baseMiB: 30000, startMs: t0, leak: { slopeMiBPerHour: 50, startMs: t0 + 2 * H, blockMiB: 20 } },
            rnd,
          ),
        ],
      },
      rnd,
    );
    const data = join(root, 'prom', 'data');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(root, 'history.om'), openMetrics(samples));
    execFileSync(PROMTOOL, ['tsdb', 'create-blocks-from', 'openmetrics', join(root, 'history.om'), data], { stdio: 'ignore' });
    prom = await startPrometheus(join(root, 'prom'), []);
    const config = parseConfig({
      data_dir: join(root, 'data'),
      host_groups: [{ name: 'cluster', source: 'prometheus', url: prom.url, timeout_ms: 10000, hosts: [{ name: 'h100-prom', match: '127.0.0.3' }] }],
    });
    svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
  });

  afterAll(async () => {
    await svc?.close();
    await prom?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('a real 400 envelope: a step past 11,000 points is refused by Prometheus, the chosen step is not', async () => {
    const client = new PromClient({ url: prom.url, timeoutMs: 10000 });
    const [from, to] = [Math.floor(t0 / 1000), Math.floor(end / 1000)];
    const msg = await client.queryRange('nvidia_smi_memory_used_bytes', from, to, 1).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(msg).toMatch(/answered 400 bad_data: .*11,?000 points/);
    const ok = await client.queryRange('nvidia_smi_memory_used_bytes', from, to, chooseStep(from, to, 1));
    expect(ok.result).toHaveLength(1);
  });

  it('query_range history of a creeping job gives the same leak finding as the sampled store would', async () => {
    const prometheus = svc.sourceOf({ name: 'h100-prom', host: 'h100-prom', origin: 'config' }) as PrometheusHostSource;
    const { samples, warnings } = await prometheus.history(t0, end);
    expect(warnings).toEqual([]);
    expect(samples.filter(isProcessSample).length).toBeGreaterThan(600);
    const store = tempWatchStore();
    try {
      await store.insertPaced(samples);
      const { findings } = findingsFromStore(store, {}, end);
      const leak = findings.find((f) => f.kind === 'leak');
      expect(leak).toMatchObject({ host: 'h100-prom', gpu: 0, pid: 4242, command: 'python train.py' });
      expect(leak!.slopeMiBPerHour).toBeGreaterThan(35);
      expect(leak!.slopeMiBPerHour).toBeLessThan(70);
    } finally {
      store.close();
    }
  });
});
