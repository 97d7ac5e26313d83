// Scheduled digests: missed-while-down posted once, no duplicates across restarts, dedup unless worse.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dedupFindings, digestReply, sparkline } from '../../src/watch/digest.js';
import { TRACES_PATH } from './generate-traces.js';
import { decodeTrace } from './generator.js';
import { DigestScheduler, type DigestConfig } from '../../src/watch/scheduler.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import type { Finding } from '../../src/watch/types.js';

const daily: DigestConfig = { name: 'daily', platform: 'console', channel: 'c', cron: '0 9 * * *', timezone: 'Europe/Berlin' };
const f = (slope: number, hours: number | null): Finding => ({
  kind: 'leak',
  host: 'gpu1',
  gpu: 0,
  pid: 1,
  user: 'alice',
  command: 'python train.py',
  slopeMiBPerHour: slope,
  hoursToFull: hours,
  currentMiB: 1000,
  totalMiB: 80000,
  series: [1, 2, 3, 4],
  rule: 'growing-memory-leak',
  severity: 60,
});

describe('digest scheduling', () => {
  it('posts a digest missed while down once, never twice across restarts', async () => {
    const d = mkdtempSync(join(tmpdir(), 'gd-sched-'));
    const posts: string[] = [];
    const post = async (x: DigestConfig) => void posts.push(x.name);
    const t0 = Date.parse('2026-11-20T07:00:00Z'); // before 09:00 Berlin
    let s = WatchStore.inDataDir(d);
    let sch = new DigestScheduler(s, [daily], post, undefined);
    expect(await sch.start(t0)).toEqual([]); // first start: nothing missed
    sch.stop();
    s.close();
    // Down over 09:00 Berlin (08:00 UTC); restart at 10:00 UTC: posted once.
    s = WatchStore.inDataDir(d);
    sch = new DigestScheduler(s, [daily], post, undefined);
    expect(await sch.start(Date.parse('2026-11-20T10:00:00Z'))).toEqual(['daily']);
    sch.stop();
    s.close();
    // Restart again the same day: no duplicate.
    s = WatchStore.inDataDir(d);
    sch = new DigestScheduler(s, [daily], post, undefined);
    expect(await sch.start(Date.parse('2026-11-20T11:00:00Z'))).toEqual([]);
    sch.stop();
    s.close();
    expect(posts).toEqual(['daily']);
  });

  it('a reported finding is repeated only when it got worse', () => {
    const first = dedupFindings([f(50, 20)], new Map(), 1);
    expect(first.post).toHaveLength(1);
    const state = first.update;
    expect(dedupFindings([f(55, 18)], state, 2).post).toHaveLength(0);
    expect(dedupFindings([f(63, 18)], state, 2).post).toHaveLength(1); // slope +26%
    expect(dedupFindings([f(50, 10)], state, 2).post).toHaveLength(1); // hours to full halved
  });

  it('digest reply: grouped, sparkline, fix from the rule base; empty says what was watched', () => {
    const r = digestReply([f(50, 20), { ...f(0, null), kind: 'idle_held', user: 'bob', pid: 2, rule: 'idle-gpu-memory-held', severity: 10 }], {
      hosts: 2,
      processes: 5,
    });
    expect(r.sections.map((s) => s.heading).filter(Boolean)).toEqual(['gpu1 · alice', 'gpu1 · bob']);
    expect(r.sections[1].table!.rows[0]).toContain('▁▃▆█');
    expect(sparkline([5, 5, 5])).toBe('▁▁▁');
    const e = digestReply([], { hosts: 3, processes: 7 });
    expect(e.sections).toHaveLength(1);
    expect(e.sections[0].text).toMatch(/No memory leaks.*3 hosts, 7 GPU processes/);
  });

  it('a scheduled digest over the store reports a stored leak once', async () => {
    const t = readFileSync(TRACES_PATH, 'utf8')
      .trim()
      .split('\n')
      .map(decodeTrace)
      .find((x) => x.id === 'creep-50-seg20')!;
    const s = WatchStore.inDataDir(mkdtempSync(join(tmpdir(), 'gd-sched-')));
    s.insert(t.samples);
    const end = Date.parse(String(t.samples[t.samples.length - 1].ts));
    const replies: string[] = [];
    const sch = new DigestScheduler(s, [daily], async (_d, r) => void replies.push(JSON.stringify(r)), undefined);
    expect(await sch.run(daily, end)).toBe(true);
    expect(await sch.run(daily, end + 3600_000)).toBe(true);
    expect(replies[0]).toContain('GPU memory creep');
    expect(replies[1]).toContain('No new or worse findings');
    s.close();
  });
});
