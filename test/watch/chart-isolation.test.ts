// A chart can never take the bot down (issue 22, item 1): `/gpu chart` and `/gpu digest` through the
// console chat (bin/gpu-doctor bot over a pipe) on stores seeded with what broke resvg before: 5,000
// processes on one GPU, and hostile rows (1e300, infinite and negative MiB, user names of 5,000 characters,
// a 12-digit pid). Each chart is drawn or falls back to text, and the bot answers `/gpu help` after it.
// A native crash in the renderer is simulated by the render child's test-only hook
// (GPU_DOCTOR_TEST_CHART_CRASH=abort with NODE_ENV=test: process.abort() right before resvg draws).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import type { Sample } from '../../src/watch/types.js';

const run = promisify(execFile);
const BIN = resolve(__dirname, '../../bin/gpu-doctor');
const MIN = 60_000;

let dir: string;

/** `procs` processes on GPU 0 of `host`, sampled every minute for `polls` polls ending a minute ago. */
function crowd(host: string, procs: number, polls: number, proc: (i: number) => { user: string; pid: number; mib: (poll: number) => number | null }): Sample[] {
  const end = Date.now() - MIN;
  const out: Sample[] = [];
  for (let k = 0; k < polls; k++) {
    const ts = end - (polls - 1 - k) * MIN;
    for (let i = 0; i < procs; i++) {
      const p = proc(i);
      out.push({
        ts,
        host,
        gpu: 0,
        gpuTotalMiB: 81_559,
        gpuUsedMiB: 60_000 + k,
        utilizationPct: 50,
        pid: p.pid,
        processStart: end - 3_600_000,
        user: p.user,
        command: `python train.py --run ${i}`,
        processMiB: p.mib(k),
      });
    }
  }
  return out;
}

const HOSTILE_MIB = [null, 1e300, -5, Infinity, 2 ** 53, 0.5];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gd-chart-iso-'));
  const store = WatchStore.inDataDir(join(dir, 'data'));
  store.insert(crowd('crowd', 5000, 6, (i) => ({ user: `user${i % 97}`, pid: 10_000 + i, mib: (k) => 8 + (i % 50) + k })));
  store.insert(
    crowd('hostile', 160, 6, (i) => ({
      user: `${'u'.repeat(5000)}${i}`,
      pid: i === 0 ? 999_999_999_999 : 20_000 + i,
      mib: (k) => HOSTILE_MIB[(i + k) % HOSTILE_MIB.length],
    })),
  );
  // A creep on one GPU for the digest's chart: one process growing 1 GiB an hour for 6 hours.
  const end = Date.now() - MIN;
  const creep: Sample[] = [];
  for (let k = 0; k <= 360; k += 5) {
    const ts = end - (360 - k) * MIN;
    creep.push({
      ts,
      host: 'creep',
      gpu: 0,
      gpuTotalMiB: 81_559,
      gpuUsedMiB: 20_000 + (k / 60) * 1024,
      utilizationPct: 90,
      pid: 4242,
      processStart: end - 7 * 3_600_000,
      user: 'alice',
      command: 'python train.py',
      processMiB: 20_000 + (k / 60) * 1024,
    });
  }
  store.insert(creep);
  store.close();
  writeFileSync(
    join(dir, 'config.yaml'),
    `data_dir: ${join(dir, 'data')}
watch:
  enabled: true
  sample_interval_s: 300
`,
  );
});

async function chat(lines: string[], env: Record<string, string> = {}): Promise<string> {
  const child = run(process.execPath, [BIN, 'bot', '--config', join(dir, 'config.yaml')], {
    env: { ...process.env, NODE_ENV: 'test', SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '', GPU_DOCTOR_FILES_DIR: join(dir, 'files'), ...env },
    timeout: 280_000,
    maxBuffer: 16 << 20,
  });
  child.child.stdin!.end(lines.map((l) => `${l}\n`).join(''));
  try {
    return (await child).stdout;
  } catch (e) {
    // A bot that died (SIGABRT) still has its answers so far on stdout: the assertions say what is missing.
    return `${(e as { stdout?: string }).stdout ?? ''}\n[bot ended: ${(e as { signal?: string; code?: number }).signal ?? (e as { code?: number }).code}]`;
  }
}

const answers = (out: string) => out.split(/^(?=\[[i✓!✗]\] )/m).filter((b) => /^\[[i✓!✗]\] /.test(b));
const savedPng = (a: string) => /\(saved: (\/[^\n)]+\.png)\)/.exec(a)?.[1];
const isHelp = (a: string) => a.includes('/gpu chart HOST [GPU] [hours]');

describe('a chart can never end the bot', () => {
  let out: string;
  beforeAll(async () => {
    out = await chat(['/gpu chart crowd 0 6', '/gpu chart hostile 0 6', '/gpu chart creep 0 6', '/gpu digest', '/gpu help']);
  }, 300_000);

  it('draws 5,000 processes as the 12 largest and one summed "others" line, and names the rest as a count', () => {
    const a = answers(out)[0];
    expect(a).toContain('Chart crowd · GPU 0 (last 6 h)');
    expect(a).toContain('5000 processes');
    expect(a).toContain(' and 4988 more (drawn summed as one line)');
    const png = readFileSync(savedPng(a)!);
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
  });

  it('answers a chart of hostile rows (1e300, infinite and negative MiB, 5,000-character user names) with a chart or its text', () => {
    const a = answers(out)[1];
    expect(a).toContain('Chart hostile · GPU 0 (last 6 h)');
    expect(a).toContain('160 processes');
    // No user name is echoed whole.
    expect(a).not.toContain('u'.repeat(100));
    if (!savedPng(a)) expect(a).toContain('The chart could not be drawn');
  });

  it('draws a chart and a digest chart after them (the crash test below asks for the same two)', () => {
    expect(savedPng(answers(out)[2])).toBeDefined();
    expect(answers(out)[2]).not.toContain('could not be drawn');
    expect(savedPng(answers(out)[3])).toBeDefined();
  });

  it('still answers /gpu help after all of them', () => {
    expect(answers(out)).toHaveLength(5);
    expect(isHelp(answers(out)[4])).toBe(true);
    expect(out).not.toContain('[bot ended');
  });
});

describe('a renderer that crashes (test hook: process.abort() where resvg draws)', () => {
  let out: string;
  beforeAll(async () => {
    out = await chat(['/gpu chart creep 0 6', '/gpu digest', '/gpu help'], { GPU_DOCTOR_TEST_CHART_CRASH: 'abort' });
  }, 300_000);

  it('answers /gpu chart with its text and says the chart could not be drawn', () => {
    const a = answers(out)[0];
    expect(a).toContain('Chart creep · GPU 0 (last 6 h)');
    expect(a).toMatch(/alice pid 4242 grows \+[\d.]+ MiB\/h/);
    expect(a).toContain('The chart could not be drawn (the renderer stopped)');
    expect(savedPng(a)).toBeUndefined();
  });

  it('posts the digest without its chart', () => {
    const a = answers(out)[1];
    expect(a).toMatch(/creep/);
    expect(a).toContain('alice');
    expect(savedPng(a)).toBeUndefined();
  });

  it('lives on to answer /gpu help', () => {
    expect(answers(out)).toHaveLength(3);
    expect(isHelp(answers(out)[2])).toBe(true);
    expect(out).not.toContain('[bot ended');
  });
});
