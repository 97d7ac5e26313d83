// The leak-watch store on a real temp SQLite file.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectLeaks } from '../../src/watch/detector.js';
import { TRACES_PATH } from './generate-traces.js';
import { decodeTrace } from './generator.js';
import { findingsFromStore, findingsOf } from '../../src/watch/findings.js';
import { findingsOffThread } from '../../src/watch/findings-thread.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { isProcessSample, type Sample } from '../../src/watch/types.js';
import { readFileSync } from 'node:fs';

const dir = () => mkdtempSync(join(tmpdir(), 'gd-store-'));
const T0 = Date.parse('2026-11-20T08:00:00Z');
const proc = (min: number, mib: number | null, pid = 4242): Sample => ({
  ts: new Date(T0 + min * 60_000).toISOString(),
  host: 'gpu1',
  gpu: 0,
  gpuTotalMiB: 81559,
  gpuUsedMiB: (mib ?? 0) + 500,
  utilizationPct: 97,
  pid,
  processStart: '2026-11-20T07:59:00Z',
  user: 'alice',
  command: 'python train.py',
  processMiB: mib,
});

describe('WatchStore', () => {
  it('inserts and reads back process, GPU-level and host RAM samples', () => {
    const s = WatchStore.inDataDir(dir());
    s.insert([
      proc(0, 1000),
      { ts: T0, host: 'gpu1', gpu: 1, gpuTotalMiB: 81559, gpuUsedMiB: 300, utilizationPct: 0 },
      { ts: T0, host: 'gpu1', kind: 'host', memTotalBytes: 512 * 2 ** 30, memAvailableBytes: 100 * 2 ** 30 },
    ]);
    s.insert([proc(1, null)]);
    const back = [...s.samplesSince(0)];
    expect(back).toHaveLength(4);
    const p = back.filter(isProcessSample);
    expect(p[0]).toMatchObject({
      host: 'gpu1',
      gpu: 0,
      pid: 4242,
      user: 'alice',
      command: 'python train.py',
      processMiB: 1000,
      gpuUsedMiB: 1500,
      gpuTotalMiB: 81559,
      utilizationPct: 97,
    });
    expect(p[1]).toMatchObject({ processMiB: null });
    expect(back.find((x) => x.kind === 'host')).toMatchObject({ memTotalBytes: 512 * 2 ** 30, memAvailableBytes: 100 * 2 ** 30 });
    expect(back.find((x) => x.kind !== 'host' && !isProcessSample(x))).toMatchObject({ gpu: 1, gpuUsedMiB: 300 });
    expect(s.watched(0)).toEqual({ hosts: 1, processes: 1 });
    s.close();
  });

  it('round-trips a labelled trace with the same findings', () => {
    const t = readFileSync(TRACES_PATH, 'utf8')
      .trim()
      .split('\n')
      .map(decodeTrace)
      .find((x) => x.id === 'creep-50-seg20')!;
    const s = WatchStore.inDataDir(dir());
    s.insert(t.samples);
    const kinds = detectLeaks(s.samplesSince(0)).map((f) => f.kind);
    expect(kinds).toEqual(detectLeaks(t.samples).map((f) => f.kind));
    expect(kinds).toContain('leak');
    s.close();
  });

  it('a worker thread computes the same findings over the store file while this thread keeps running', async () => {
    const traces = readFileSync(TRACES_PATH, 'utf8').trim().split('\n').map(decodeTrace);
    const s = WatchStore.inDataDir(dir());
    for (const id of ['creep-50-seg20', 'rank0-validation-steps', 'plateau-24h-70g', 'idle-notebook']) {
      const t = traces.find((x) => x.id === id)!;
      s.insert(t.samples.map((x) => ({ ...x, host: `${id}-${x.host}` })));
    }
    const now = (s.latestTsMs() ?? 0) + 60_000;
    const here = findingsFromStore(s, {}, now);
    expect(new Set(here.findings.map((f) => f.kind))).toEqual(new Set(['leak', 'rank0_growth', 'idle_held']));
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    const there = await findingsOf(s, {}, now);
    clearInterval(ticker);
    expect(there).toEqual(here);
    expect(turns).toBeGreaterThan(0); // this thread's timers kept firing while the worker computed
    s.close();
  });

  it('a worker that cannot read the store fails with its reason, not a hang', async () => {
    const s = WatchStore.inDataDir(dir());
    const { reader } = s.findingsInput() as { reader: string };
    s.close();
    await expect(findingsOffThread(join(dir(), 'no-such-dir', 'watch.sqlite'), reader)).rejects.toThrow(/unable to open|directory|no such/i);
  });

  it('retention downsamples old rows to the per-hour max rather than dropping them', () => {
    const s = WatchStore.inDataDir(dir());
    const samples: Sample[] = [];
    for (let m = 0; m < 180; m++) samples.push(proc(m, 1000 + m));
    s.insert(samples);
    const now = T0 + 9 * 86400_000; // 9 days later, retention 7 days: all 3 hours are old
    const r = s.applyRetention(7, now);
    expect(r.before).toBe(360); // 180 process + 180 GPU rows
    const back = [...s.samplesSince(0)].filter(isProcessSample);
    expect(back.map((x) => x.processMiB)).toEqual([1059, 1119, 1179]);
    expect(back.map((x) => x.ts)).toEqual([T0, T0 + 3600_000, T0 + 7200_000]);
    // Idempotent: a second pass does not touch them again.
    expect(s.applyRetention(7, now)).toEqual({ before: 0, after: 0 });
    expect([...s.samplesSince(0)].filter(isProcessSample)).toHaveLength(3);
    s.close();
  });

  it('persists last run and reported findings across reopen', () => {
    const d = dir();
    const s = WatchStore.inDataDir(d);
    expect(s.lastRun('daily')).toBeNull();
    s.setLastRun('daily', 1234567);
    s.saveReported('daily', new Map([['leak|gpu1|0|4242|alice', { slopeMiBPerHour: 50, hoursToFull: 10, reportedAt: 99 }]]));
    s.close();
    const s2 = WatchStore.inDataDir(d);
    expect(s2.lastRun('daily')).toBe(1234567);
    expect(s2.reported('daily').get('leak|gpu1|0|4242|alice')).toEqual({ slopeMiBPerHour: 50, hoursToFull: 10, reportedAt: 99 });
    expect(s2.db.pragma('journal_mode', { simple: true })).toBe('wal');
    s2.close();
  });
});
