// The store's per-window summaries (wsum) against the raw rows: the digest reads summaries, and must find
// exactly what the detector finds from every sample.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectLeaks, LeakDetector } from '../../src/watch/detector.js';
import { TRACES_PATH } from './generate-traces.js';
import { decodeTrace } from './generator.js';
import { findingsFromStore } from '../../src/watch/findings.js';
import { toMs } from '../../src/watch/series.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import type { DetectorOptions, Finding, Sample } from '../../src/watch/types.js';

const H = 3_600_000;
const dir = () => mkdtempSync(join(tmpdir(), 'gd-wsum-'));
const traces = readFileSync(TRACES_PATH, 'utf8').trim().split('\n').map(decodeTrace);

function fromRows(s: WatchStore, o: Partial<DetectorOptions>, now: number): Finding[] {
  const d = new LeakDetector(o);
  return d.addAll(s.samplesSince(now - d.options.maxHistoryHours * H)).findings();
}

function fromSummaries(s: WatchStore, o: Partial<DetectorOptions>, now: number): Finding[] {
  const d = new LeakDetector(o);
  expect(s.summariseInto(d.index, now - d.options.maxHistoryHours * H, d.options)).toBe(true);
  return d.findings();
}

/** Samples grouped by timestamp, as the sampler writes them (one transaction per poll). */
function polls(samples: Sample[]): Sample[][] {
  const out: Sample[][] = [];
  let last: number | undefined;
  for (const x of samples) {
    const t = toMs(x.ts);
    if (t !== last) out.push([]);
    out[out.length - 1].push(x);
    last = t;
  }
  return out;
}

const wsum = (s: WatchStore) => s.db.prepare('SELECT * FROM wsum ORDER BY w, sid').raw(true).all();

describe('window summaries (wsum)', () => {
  it('every stored trace: summarised digest == digest from every row, whole history and a window cut mid-trace', () => {
    let nonEmpty = 0;
    const kinds = new Set<string>();
    for (const t of traces) {
      const s = WatchStore.inDataDir(dir());
      for (const p of polls(t.samples)) s.insert(p);
      const end = toMs(t.samples[t.samples.length - 1].ts);
      for (const [o, now] of [
        [{}, end],
        [{}, end + 7 * 60_000], // "now" off the window grid: the first window is cut
        [{ maxHistoryHours: 5 }, end - 37 * 60_000], // history cut mid-trace, part of it after "now"
        [{ maxHistoryHours: 9, idleHours: 1 }, end],
      ] as [Partial<DetectorOptions>, number][]) {
        const raw = fromRows(s, o, now);
        expect(fromSummaries(s, o, now), `${t.id} ${JSON.stringify(o)} now=${now}`).toEqual(raw);
        if (raw.length) nonEmpty++;
        for (const f of raw) kinds.add(f.kind);
      }
      // And the scheduler's digest uses them.
      expect(findingsFromStore(s, {}, end).findings).toEqual(fromRows(s, {}, end));
      s.close();
    }
    expect(nonEmpty).toBeGreaterThan(40);
    expect([...kinds].sort()).toEqual(['host_ram', 'idle_held', 'leak', 'rank0_growth']);
  });

  it('the summarised digest finds what the detector finds from the original samples', () => {
    for (const t of traces) {
      const s = WatchStore.inDataDir(dir());
      s.insert(t.samples);
      const end = toMs(t.samples[t.samples.length - 1].ts);
      const want = detectLeaks(t.samples).map((f) => [f.kind, f.host, f.gpu, f.pid]);
      expect(
        findingsFromStore(s, {}, end).findings.map((f) => [f.kind, f.host, f.gpu, f.pid]),
        t.id,
      ).toEqual(want);
      s.close();
    }
  });

  it('summaries kept at insert time equal summaries rebuilt from the rows (re-sent polls, reopen of an older store)', () => {
    const ids = ['idle-after-training', 'host-ram-creep', 'creep-restarted', 'rank0-validation-steps', 'gaps'];
    for (const t of traces.filter((x) => ids.includes(x.id))) {
      const d = dir();
      const s = WatchStore.inDataDir(d);
      const ps = polls(t.samples);
      ps.forEach((p, i) => {
        s.insert(p);
        if (i % 97 === 5) s.insert(p.map((x) => ('processMiB' in x && x.processMiB !== null ? { ...x, processMiB: x.processMiB + 3 } : x))); // re-sent, changed
      });
      const kept = wsum(s);
      const end = toMs(t.samples[t.samples.length - 1].ts);
      expect(fromSummaries(s, {}, end)).toEqual(fromRows(s, {}, end));
      // A store without summaries (or of an older layout) rebuilds them on open.
      s.db.exec("DELETE FROM wsum; DELETE FROM watch_meta WHERE key = 'wsum_version'");
      s.close();
      const s2 = WatchStore.inDataDir(d);
      expect(wsum(s2), t.id).toEqual(kept);
      s2.close();
    }
  });

  it('retention rebuilds the summaries of downsampled hours', () => {
    const t = traces.find((x) => x.id === 'creep-50-seg20')!;
    const s = WatchStore.inDataDir(dir());
    s.insert(t.samples);
    const end = toMs(t.samples[t.samples.length - 1].ts);
    s.applyRetention(0.25, end); // all but the last 6 h become hourly maxima
    const kept = wsum(s);
    s.db.exec("DELETE FROM watch_meta WHERE key = 'wsum_version'");
    const file = s.file;
    s.close();
    const s2 = new WatchStore(file);
    expect(wsum(s2)).toEqual(kept);
    expect(fromSummaries(s2, {}, end)).toEqual(fromRows(s2, {}, end));
    s2.close();
  });

  it('falls back to the rows for another window length', () => {
    const s = WatchStore.inDataDir(dir());
    const d = new LeakDetector({ windowMinutes: 5 });
    expect(s.summariseInto(d.index, 0, d.options)).toBe(false);
    s.close();
  });
});
