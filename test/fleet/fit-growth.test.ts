// `/gpu fit` with the leak watch's trend: the growth rate comes from the watch's own findings over its
// store (computed off-thread as for a digest) and moves a GPU out of "free for N hours".
// The live reading is the real 8x H200 one (fixtures 13 + 37). The six hours of history are synthetic,
// and said so: bob's pid 1425260 on GPU 5 creeping 600 MiB/h, sampled every minute, as the sampler would
// have stored it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { renderText } from '../../src/adapters/console/render.js';
import { parseConfig } from '../../src/config.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { HostsService, Services } from '../../src/core/services.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import type { Sample } from '../../src/watch/types.js';
import { h200After, statusOf } from '../hosts/replay-readings.js';

const HOUR = 3_600_000;
const now = Date.now();
const reading = statusOf('gpu-a', h200After(), now);

const hosts: HostsService = {
  status: () => Promise.resolve([reading]),
  mem: () => Promise.resolve([]),
  list: () => Promise.resolve([{ name: 'gpu-a', target: 'ml@10.0.0.5:22', origin: 'config' as const }]),
  add: () => Promise.reject(new Error('not here')),
  remove: () => Promise.resolve(false),
  test: (name) => Promise.resolve({ name, ok: false, steps: [] }),
  trust: () => Promise.reject(new Error('not here')),
};

function creep(): Sample[] {
  const start = now - 6.5 * HOUR;
  const out: Sample[] = [];
  for (let t = now - 6 * HOUR; t <= now; t += 60_000) {
    const mib = Math.round(60_000 + (600 * (t - start)) / HOUR);
    out.push({
      ts: t,
      host: 'gpu-a',
      gpu: 5,
      gpuTotalMiB: 143771,
      gpuUsedMiB: mib + 10,
      utilizationPct: 90,
      pid: 1425260,
      processStart: start,
      user: 'bob',
      command: 'python3 -m vllm.entrypoints.openai.api_server --tp 8',
      processMiB: mib,
    });
  }
  return out;
}

describe('fit counts the leak watch growth', () => {
  const store = WatchStore.inDataDir(mkdtempSync(join(tmpdir(), 'gd-fit-growth-')));
  store.insert(creep());
  const config = parseConfig({});
  const watch = new WatchRuntime(store, hosts, undefined, config.watch);
  const services = { hosts, watch, fit: { marginMiB: 1024, marginPct: 5, maxNotifyPerUser: 3 } } as unknown as Services;
  const registry = new CommandRegistry(allCommands());
  const fit = async (line: string) => (await registry.dispatch(line, { platform: 'slack', userId: 'U1', isAdmin: false, services })).reply;
  afterAll(() => watch.stop());

  it('the watch reports the creep as a growth rate of that process on that GPU', async () => {
    const growth = await watch.gpuGrowth(now);
    expect(growth).toHaveLength(1);
    expect(growth[0]).toMatchObject({ host: 'gpu-a', gpu: 5, pid: 1425260, user: 'bob' });
    expect(growth[0].mibPerHour).toBeGreaterThan(500);
    expect(growth[0].mibPerHour).toBeLessThan(700);
  });

  it('GPU 5 fits a 40G job for 1 hour but not for 24: its process would take the room', async () => {
    const oneHour = await fit('/gpu fit 40G 1 1 --shared');
    const gpusIn = (r: typeof oneHour) => r.sections.flatMap((s) => s.table?.rows.map((row) => row[4]) ?? []);
    expect(gpusIn(oneHour)).toContain('CUDA_VISIBLE_DEVICES=5');
    expect(oneHour.footer).toContain('1 GPU has a growing process');
    const day = await fit('/gpu fit 40G 1 24 --shared');
    expect(gpusIn(day)).not.toContain('CUDA_VISIBLE_DEVICES=5');
    expect(gpusIn(day)).toHaveLength(7);
    // 24 h without the creep: all eight would fit (the others' readings hold 84282-84522 MiB, no growth).
    expect(renderText(day)).toContain('40G for 24 h fits on 7 GPUs');
  });
});
