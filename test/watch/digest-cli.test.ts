// `gpu-doctor digest --samples FILE [--json]` on samples written from stored labelled traces.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { TRACES_PATH } from './generate-traces.js';
import { decodeTrace } from './generator.js';

const run = promisify(execFile);
const BIN = resolve(__dirname, '../../bin/gpu-doctor');
const PICK = ['plateau-8h', 'sawtooth-empty-cache', 'creep-50-seg20', 'rank0-validation-steps', 'idle-notebook', 'host-ram-pressure'];

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { maxBuffer: 64 << 20 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

let file: string;
let cleanFile: string;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'gd-digest-'));
  const traces = readFileSync(TRACES_PATH, 'utf8').trim().split('\n').map(decodeTrace);
  const picked = PICK.map((id) => traces.find((t) => t.id === id)!);
  file = join(dir, 'samples.jsonl');
  writeFileSync(file, picked.flatMap((t) => t.samples.map((s) => JSON.stringify(s))).join('\n') + '\n');
  cleanFile = join(dir, 'clean.jsonl');
  writeFileSync(cleanFile, picked[0].samples.map((s) => JSON.stringify(s)).join('\n') + '\n');
});

describe('gpu-doctor digest', () => {
  it('--json finds the labelled kinds, worst first, with knowledge rule ids', async () => {
    const r = await cli(['digest', '--samples', file, '--json']);
    expect(r.code).toBe(0);
    const { findings } = JSON.parse(r.stdout) as { findings: Record<string, unknown>[] };
    const byHost = new Map(findings.map((f) => [f.host, f.kind]));
    expect(byHost.get('gpu-creep-50-seg20')).toBe('leak');
    expect(byHost.get('gpu-rank0-validation-steps')).toBe('rank0_growth');
    expect(byHost.get('gpu-idle-notebook')).toBe('idle_held');
    expect(findings.some((f) => f.kind === 'host_ram')).toBe(true);
    expect(findings.some((f) => f.host === 'gpu-plateau-8h' || f.host === 'gpu-sawtooth-empty-cache')).toBe(false);
    const leak = findings.find((f) => f.kind === 'leak')!;
    expect(Object.keys(leak).sort()).toEqual(['fix', 'gpu', 'host', 'hoursToFull', 'kind', 'pattern', 'pid', 'rule', 'slopeMiBPerHour', 'user'].sort());
    expect(leak.rule).toBe('growing-memory-leak');
    expect(findings.find((f) => f.kind === 'host_ram')!.rule).toBe('dataloader-worker-killed');
    expect(findings.find((f) => f.kind === 'idle_held')!.rule).toBe('idle-gpu-memory-held');
    // Worst first: the idle finding (lowest severity band) comes after every growth finding.
    const idx = findings.findIndex((f) => f.kind === 'idle_held');
    expect(findings.slice(idx + 1).every((f) => f.kind === 'idle_held')).toBe(true);
  });

  it('human digest has sparklines and fixes; nothing found says what was watched', async () => {
    const r = await cli(['digest', '--samples', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/[▁▂▃▄▅▆▇█]{4,}/);
    expect(r.stdout).toMatch(/Fix: /);
    const c = await cli(['digest', '--samples', cleanFile]);
    expect(c.code).toBe(0);
    expect(c.stdout).toMatch(/No memory leaks.*watched 1 host, 1 GPU process/);
  });

  it('usage errors exit 2 with one line', async () => {
    for (const args of [['digest'], ['digest', '--samples', '/nonexistent/x.jsonl'], ['digest', '--bogus']]) {
      const r = await cli(args);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
