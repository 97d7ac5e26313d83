// MIG instances from dcgm-exporter through Prometheus (issue 25 §2): `/gpu status` and `/gpu mem` through the bot
// as `createApp` builds it, against a real Prometheus scraping real dcgm-exporter output with MIG series
// (GPU_I_ID / GPU_I_PROFILE; test/fixtures/prometheus/README.md says where each comes from):
// - an A30 node whose exporter reports the MIG instances only (no whole-GPU series; NVIDIA/dcgm-exporter#317),
// - the NVIDIA docs' A100 sample: whole-GPU series beside one MIG instance's (no per-instance memory),
// - the A100 sample without its MIG lines, as before (no MIG table).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { createApp, type App } from '../../src/app.js';
import type { CommandContext } from '../../src/core/command.js';
import { gpusOf } from '../../src/sources/prometheus/parse.js';
import { exposition, fixtureText } from './exposition.js';
import { describeWithPrometheus, serveMetrics, startPrometheus, waitForSeries, type PrometheusInstance } from './prometheus-harness.js';

const values = (file: string) =>
  exposition(fixtureText(file), { instance: '10.0.0.7:9400', job: 'dcgm' }).map((x) => ({ metric: x.metric, v: Number(x.value[1]) }));

describe('dcgm-exporter MIG series, read', () => {
  it('an exporter that reports MIG instances only: each GPU from its instances, memory per instance, none for the whole GPU', () => {
    const r = gpusOf(values('dcgm-exporter-a30-mig.prom'));
    expect(r.exporter).toBe('dcgm');
    expect(r.gpus.map((g) => [g.index, g.uuid, g.name, g.memoryUsedMiB, g.memoryTotalMiB])).toEqual([
      [0, 'GPU-265c9814-6156-355b-e589-ff2064894f16', 'NVIDIA A30', null, null],
      [1, 'GPU-2d20791a-b4a6-ba59-97f1-e95b99fe5b49', 'NVIDIA A30', null, null],
    ]);
    // FB_USED 3 + FB_FREE 6012 MiB per 1g.6gb instance, as the exporter says.
    const instance = (gi: number) => ({ gi, ci: null, device: null, profile: '1g.6gb', memoryUsedMiB: 3, memoryTotalMiB: 6015 });
    expect(r.gpus[0].mig).toEqual([3, 4, 5, 6].map(instance));
    expect(r.gpus[1].mig).toEqual([3, 4].map(instance));
  });

  it('whole-GPU series beside an instance series: the GPU keeps its figures, the instance its profile (memory unknown)', () => {
    const r = gpusOf(values('dcgm-exporter-a100-mig-docs.prom'));
    expect(r.gpus).toHaveLength(1);
    expect(r.gpus[0]).toMatchObject({ index: 0, memoryUsedMiB: 4845, memoryTotalMiB: 4845 + 35690, temperatureC: 61 });
    expect(r.gpus[0].mig).toEqual([{ gi: 13, ci: null, device: null, profile: '1g.5gb', memoryUsedMiB: null, memoryTotalMiB: null }]);
    // The instance's own XID_ERRORS series is not the GPU's health.
    expect(r.gpus[0].health?.lastXid).toBe(0);
  });

  it('refuses what is not an instance: a GPU_I_ID that is not a small integer, a profile that is not one, DCGM blanks', () => {
    const base = values('dcgm-exporter-a30-mig.prom').slice(0, 1);
    const odd = (labels: Record<string, string>) => gpusOf(base.map((s) => ({ ...s, metric: { ...s.metric, ...labels } }))).gpus[0].mig;
    expect(odd({ GPU_I_ID: 'x' })?.[0].gi).toBeNull();
    expect(odd({ GPU_I_ID: '99999999999' })?.[0].gi).toBeNull();
    expect(odd({ GPU_I_PROFILE: '<<<NULL>>>' })?.[0].profile).toBeNull();
    expect(odd({ GPU_I_PROFILE: 'x'.repeat(200) })?.[0].profile).toBeNull();
    // Non-MIG output is as before: no `mig` field at all.
    expect(gpusOf(values('dcgm-exporter-a100.prom')).gpus[0]).not.toHaveProperty('mig');
  });
});

describeWithPrometheus('MIG instances from dcgm-exporter through a real Prometheus', 'test/sources/prometheus-mig.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-prom-mig-'));
  let prom: PrometheusInstance;
  let app: App;
  const closers: (() => Promise<void>)[] = [];
  const run = async (line: string, locale: 'en' | 'zh' = 'en') => {
    const ctx: CommandContext = { platform: 'slack', userId: 'U1MIG', isAdmin: false, services: app.services, locale };
    const out = await app.registry.dispatch(line, ctx);
    return { reply: out.reply, text: renderText(out.reply) };
  };

  beforeAll(async () => {
    // Each "machine" on its own loopback address, its GPU and node exporters on ports of their own.
    const served = await Promise.all([
      serveMetrics('127.0.0.4', fixtureText('dcgm-exporter-a30-mig.prom')),
      serveMetrics('127.0.0.4', fixtureText('node-exporter-e2e-memory.prom')),
      serveMetrics('127.0.0.5', fixtureText('dcgm-exporter-a100-mig-docs.prom')),
      serveMetrics('127.0.0.6', fixtureText('dcgm-exporter-a100.prom')),
      serveMetrics('127.0.0.6', fixtureText('node-exporter-e2e-memory.prom')),
    ]);
    for (const s of served) closers.push(() => s.close());
    prom = await startPrometheus(join(root, 'prom'), [
      { job: 'dcgm', targets: [served[0].target, served[2].target, served[3].target] },
      { job: 'node', targets: [served[1].target, served[4].target] },
    ]);
    await waitForSeries(prom.url, 'up == 1', 5);
    // 6 A30 instances' FB_USED, the A100 samples' FB_USED (2) and XID_ERRORS (3), two hosts' MemTotal.
    await waitForSeries(prom.url, '{__name__=~"DCGM_FI_DEV_FB_USED|DCGM_FI_DEV_XID_ERRORS|node_memory_MemTotal_bytes"}', 6 + 2 + 3 + 2);
    const cfg = join(root, 'config.yaml');
    writeFileSync(
      cfg,
      [
        `data_dir: ${join(root, 'data')}`,
        'host_groups:',
        '  - name: k8s',
        '    source: prometheus',
        `    url: ${prom.url}`,
        '    timeout_ms: 5000',
        '    hosts:',
        '      - { name: a30, match: 127.0.0.4 }',
        '      - { name: a100mig, match: 127.0.0.5 }',
        '      - { name: a100, match: 127.0.0.6 }',
        '',
      ].join('\n'),
    );
    app = await createApp(cfg);
  });

  afterAll(async () => {
    await app?.close();
    await prom?.stop();
    for (const c of closers) await c();
    rmSync(root, { recursive: true, force: true });
  });

  it('status lists each MIG instance with its GI, profile and memory, under the GPUs they are of', async () => {
    const { reply, text } = await run('/gpu status a30 a100mig');
    const mig = reply.sections.find((s) => s.heading === 'MIG instances')?.table;
    expect(mig, text).toBeDefined();
    expect(mig!.columns).toEqual(['GPU', 'GI', 'CI', 'MIG dev', 'Profile', 'Memory', 'Processes']);
    // The a30 host's table first (hosts in the order asked), then the A100's one instance.
    const a30Rows = reply.sections.findIndex((s) => s.heading?.startsWith('a30 '));
    const a100Rows = reply.sections.findIndex((s) => s.heading?.startsWith('a100mig '));
    const tables = reply.sections
      .filter((s) => s.heading === 'MIG instances')
      .map((s) => s.table!.rows.map((r) => [r[0], r[1], r[4], r[5].replace(/^\S+ /, '')]));
    expect(a30Rows).toBeLessThan(a100Rows);
    expect(tables).toEqual([
      [
        ['0', '3', '1g.6gb', '3/6015 MiB'],
        ['0', '4', '1g.6gb', '3/6015 MiB'],
        ['0', '5', '1g.6gb', '3/6015 MiB'],
        ['0', '6', '1g.6gb', '3/6015 MiB'],
        ['1', '3', '1g.6gb', '3/6015 MiB'],
        ['1', '4', '1g.6gb', '3/6015 MiB'],
      ],
      [['0', '13', '1g.5gb', 'n/a']],
    ]);
    // The A30s' rows name the card (modelName of the instance series); the A100 keeps its whole-GPU figures.
    const gpuRows = reply.sections[a30Rows].table!.rows;
    expect(gpuRows.map((r) => r.slice(0, 2))).toEqual([
      ['0', 'NVIDIA A30'],
      ['1', 'NVIDIA A30'],
    ]);
    expect(reply.sections[a100Rows].table!.rows[0][2]).toMatch(/ 4845\/40535 MiB$/);
    expect(reply.severity, text).toBe('ok');
  });

  it('mem lists the MIG instances beside host RAM; a host without MIG series shows none', async () => {
    const { reply, text } = await run('/gpu mem a30 a100');
    expect(reply.sections[0].table!.rows.map((r) => r[0])).toEqual(['a30', 'a100']);
    const mig = reply.sections.find((s) => s.heading === 'MIG instances of a30')?.table;
    expect(mig, text).toBeDefined();
    expect(mig!.rows.map((r) => [r[0], r[1], r[4], r[5].replace(/^\S+ /, '')])).toEqual(
      [...[3, 4, 5, 6].map((gi) => ['0', String(gi)]), ['1', '3'], ['1', '4']].map(([gpu, gi]) => [gpu, gi, '1g.6gb', '3/6015 MiB']),
    );
    expect(text).not.toContain('MIG instances of a100');
    const plain = await run('/gpu status a100');
    expect(
      plain.reply.sections.some((s) => s.heading === 'MIG instances'),
      plain.text,
    ).toBe(false);
  });

  it('in Chinese', async () => {
    const { text } = await run('/gpu status a30', 'zh');
    expect(text).toContain('MIG 实例');
    expect(text).toContain('1g.6gb');
  });
});
