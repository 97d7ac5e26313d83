// A `source: prometheus` group (PrometheusGroup) over a fake fetch that answers /api/v1/query with the
// real exporter output of test/fixtures/prometheus, labelled per host: many hosts asked at once share
// the group's two queries and each gets its own series (the answer is grouped by host once per batch,
// bench/prometheus-status.ts measures it at 1,000 hosts).
import { describe, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { memReply, statusReply } from '../../src/hosts/render.js';
import type { PromGroupSettings } from '../../src/sources/prometheus/config.js';
import { PrometheusGroup } from '../../src/sources/prometheus/hosts.js';
import { DEFAULT_JOIN, type PromVectorSample } from '../../src/sources/prometheus/parse.js';
import { exposition, fixtureText } from './exposition.js';

/** The dcgm-exporter sample and node_exporter meminfo of host i, each on its exporter's port; host i's GPU 0 uses 1000 + i MiB. */
function fleet(n: number): { gpu: PromVectorSample[]; node: PromVectorSample[] } {
  const gpu: PromVectorSample[] = [];
  const node: PromVectorSample[] = [];
  for (let i = 0; i < n; i++) {
    for (const s of exposition(fixtureText('dcgm-exporter-a100.prom'), { instance: `10.0.${i >> 8}.${i & 255}:9400`, job: 'dcgm' }))
      gpu.push(s.metric.__name__ === 'DCGM_FI_DEV_FB_USED' ? { ...s, value: [s.value[0], String(1000 + i)] } : s);
    node.push(...exposition(fixtureText('node-exporter-e2e-memory.prom'), { instance: `10.0.${i >> 8}.${i & 255}:9100`, job: 'node' }));
  }
  return { gpu, node };
}

/** A fetch answering the group's GPU query with `gpu` and its node query with `node`, counting requests. */
function fakeFetch(answers: { gpu: PromVectorSample[]; node: PromVectorSample[] }, extra: { warnings?: string[] } = {}) {
  const seen: string[] = [];
  const impl = (async (_url: URL | RequestInfo, init?: RequestInit) => {
    const query = new URLSearchParams(init?.body as URLSearchParams).get('query') ?? '';
    seen.push(query);
    const result = query.includes('node_memory_') ? answers.node : answers.gpu;
    return new Response(JSON.stringify({ status: 'success', data: { resultType: 'vector', result }, ...extra }), { status: 200 });
  }) as typeof fetch;
  return { impl, seen };
}

const settings = (hosts: PromGroupSettings['hosts']): PromGroupSettings => ({
  name: 'fleet',
  url: 'http://prometheus.test:9090',
  timeoutMs: 2000,
  historyStepS: 60,
  join: DEFAULT_JOIN,
  hosts,
});

describe('a Prometheus host group', () => {
  it('answers 300 hosts asked at once with two queries, each host with its own series', async () => {
    const n = 300;
    const hosts = Array.from({ length: n }, (_, i) => ({ name: `gpu${i}`, match: `10.0.${i >> 8}.${i & 255}` }));
    // A second name for host 7 (the same machine under two names): both read its series.
    hosts.push({ name: 'alias7', match: '10.0.0.7' });
    const f = fakeFetch(fleet(n));
    const g = new PrometheusGroup(settings(hosts), f.impl);
    const all = await Promise.all(hosts.map((h) => g.status(h.name)));
    expect(f.seen).toHaveLength(2);
    for (const [i, r] of all.entries()) {
      if (!r.ok) throw new Error(`${r.name}: ${r.error}`);
      expect(r.gpus).toHaveLength(1);
      expect(r.gpus[0].memoryUsedMiB).toBe(1000 + (i < n ? i : 7));
      expect(r.memory?.totalBytes).toBe(3831959552);
    }
    const mem = await Promise.all(hosts.slice(0, 5).map((h) => g.mem(h.name)));
    expect(mem.every((m) => m.ok)).toBe(true);
    expect(f.seen).toHaveLength(4);
  });

  it('a host with no series in a shared answer gets its own line, the others their readings', async () => {
    const f = fakeFetch(fleet(2));
    const g = new PrometheusGroup(
      settings([
        { name: 'a', match: '10.0.0.0' },
        { name: 'gone', match: '10.9.9.9' },
      ]),
      f.impl,
    );
    const [a, gone] = await Promise.all([g.status('a'), g.status('gone')]);
    expect(a.ok).toBe(true);
    expect(gone).toMatchObject({
      ok: false,
      error: expect.stringMatching(/no dcgm-exporter, nvidia_gpu_exporter or node_exporter series for 10\.9\.9\.9/) as unknown,
    });
  });

  it("mem shows the API's warnings (partial data) with the figures, as status does", async () => {
    const warning = 'remote read of store eu-1 failed: partial data';
    const f = fakeFetch(fleet(1), { warnings: [warning] });
    const g = new PrometheusGroup(settings([{ name: 'a', match: '10.0.0.0' }]), f.impl);
    const [mem, status] = await Promise.all([g.mem('a'), g.status('a')]);
    expect(mem).toMatchObject({ ok: true, warning: `Prometheus warns (data may be partial): ${warning}` });
    expect(status.ok && status.warning).toContain(`Prometheus warns (data may be partial): ${warning}`);
    const reply = memReply([mem]);
    expect(reply.severity).toBe('warning');
    expect(renderText(reply)).toContain(`⚠ a: Prometheus warns (data may be partial): ${warning}`);
    // Without warnings, nothing is added.
    const quiet = new PrometheusGroup(settings([{ name: 'a', match: '10.0.0.0' }]), fakeFetch(fleet(1)).impl);
    const m2 = await quiet.mem('a');
    expect(m2.ok && m2.warning).toBeUndefined();
    expect(memReply([m2]).severity).toBe('ok');
  });

  it("names the Kubernetes pods holding the GPUs from dcgm-exporter's pod mapping labels (pod, namespace, container; the old names; exported_* behind Kubernetes SD)", async () => {
    // The NVIDIA docs sample as served from a GPU node's dcgm-exporter with pod mapping: the label names are
    // dcgm-exporter's (pkg/dcgmexporter: podAttribute "pod", namespaceAttribute "namespace", containerAttribute
    // "container"; with --kubernetes-use-old-namespace "pod_name", "pod_namespace", "container_name").
    const base = exposition(fixtureText('dcgm-exporter-a100.prom'), { instance: '10.0.0.1:9400', job: 'dcgm' });
    const gpu1 = base.map((s) => ({ ...s, metric: { ...s.metric, gpu: '1', UUID: 'GPU-00000000-0000-0000-0000-000000000001', device: 'nvidia1' } }));
    const labelled = (series: PromVectorSample[], labels: Record<string, string>) => series.map((s) => ({ ...s, metric: { ...s.metric, ...labels } }));
    const node = exposition(fixtureText('node-exporter-e2e-memory.prom'), { instance: '10.0.0.1:9100', job: 'node' });
    const read = async (gpuSeries: PromVectorSample[]) => {
      const g = new PrometheusGroup(settings([{ name: 'k8s-a100', match: '10.0.0.1' }]), fakeFetch({ gpu: gpuSeries, node }).impl);
      const r = await g.status('k8s-a100');
      if (!r.ok) throw new Error(r.error);
      return r;
    };
    // GPU 0 held by a training pod, GPU 1 shared by two pods (time-slicing: the same series once per pod).
    const current = await read([
      ...labelled(base, { pod: 'llm-train-7f9c-0', namespace: 'research', container: 'trainer' }),
      ...labelled(gpu1, { pod: 'notebook-alice', namespace: 'jupyter', container: 'notebook' }),
      ...labelled(gpu1, { pod: 'notebook-bob', namespace: 'jupyter', container: 'notebook' }),
    ]);
    expect(current.gpus.map((g) => [g.index, g.memoryUsedMiB])).toEqual([
      [0, 4845],
      [1, 4845],
    ]);
    expect(current.warning).toBe(
      'no per-process data (dcgm-exporter); the pods holding the GPUs: GPU 0 research/llm-train-7f9c-0 (container trainer), ' +
        'GPU 1 jupyter/notebook-alice (container notebook), GPU 1 jupyter/notebook-bob (container notebook)',
    );
    const old = await read(labelled(base, { pod_name: 'llm-train-7f9c-0', pod_namespace: 'research', container_name: 'trainer' }));
    expect(old.warning).toContain('GPU 0 research/llm-train-7f9c-0 (container trainer)');
    // Scraped by Kubernetes SD: Prometheus' target labels name the exporter's own pod; the workload's are exported_*.
    const sd = await read(
      labelled(base, {
        pod: 'nvidia-dcgm-exporter-x7k2p',
        namespace: 'gpu-operator',
        container: 'nvidia-dcgm-exporter',
        exported_pod: 'llm-train-7f9c-0',
        exported_namespace: 'research',
        exported_container: 'trainer',
      }),
    );
    expect(sd.warning).toContain('GPU 0 research/llm-train-7f9c-0 (container trainer)');
    expect(sd.warning).not.toContain('dcgm-exporter-x7k2p');
    // No workload mapped: only the exporter's own pod in the target labels, which holds nothing.
    const idle = await read(labelled(base, { pod: 'nvidia-dcgm-exporter-x7k2p', namespace: 'gpu-operator', container: 'nvidia-dcgm-exporter' }));
    expect(idle.warning).toMatch(/^no per-process data: dcgm-exporter reports whole GPUs only/);
    const text = renderText(statusReply([current]));
    expect(text).toContain('research/llm-train-7f9c-0 (container trainer)');
  });
});
