// The leak digest picks its first fix from how the creep grows (issue 12 item 3): a steady creep is
// references kept across iterations (.item(), detach), and a job whose memory drops back after peaks
// already empties its cache, so "call empty_cache" is not its first fix. Through the CLI
// (`gpu-doctor digest --samples FILE --json`) on the stored labelled traces.
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

interface Row {
  host: string;
  kind: string;
  pattern: string | null;
  fix: string | null;
}
const byHost = new Map<string, Row[]>();

// Labelled traces (test/watch/trace-scenarios.ts): creeps with no validation, and creeps under a
// validation saw-tooth whose job calls torch.cuda.empty_cache() (the sampler sees the dips).
const STEADY = ['creep-20-seg20', 'creep-50-seg20', 'creep-200-seg128', 'creep-10-small-blocks-from-start'];
const UNDER_EMPTY_CACHE = ['creep-50-seg20-sawtooth', 'creep-10-small-blocks-late'];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gd-pattern-'));
  const traces = readFileSync(TRACES_PATH, 'utf8').trim().split('\n').map(decodeTrace);
  const file = join(dir, 'samples.jsonl');
  const picked = [...STEADY, ...UNDER_EMPTY_CACHE, 'rank0-validation-steps'].map((id) => traces.find((t) => t.id === id)!);
  writeFileSync(file, picked.flatMap((t) => t.samples.map((s) => JSON.stringify(s))).join('\n') + '\n');
  const { stdout } = await run(process.execPath, [BIN, 'digest', '--samples', file, '--json'], { maxBuffer: 64 << 20, timeout: 60_000 });
  for (const f of JSON.parse(stdout).findings as Row[]) byHost.set(f.host, [...(byHost.get(f.host) ?? []), f]);
}, 90_000);

const leakOf = (id: string) => (byHost.get(`gpu-${id}`) ?? []).find((f) => f.kind === 'leak');

describe('leak digest: the creep pattern picks the first fix', () => {
  it.each(STEADY)('%s: a steady creep gets .item() / loss = None first, not empty_cache', (id) => {
    const f = leakOf(id);
    expect(f?.pattern).toBe('steady');
    expect(f?.fix).toMatch(/loss\.item\(\)/);
    expect(f?.fix).not.toMatch(/empty_cache/);
  });

  it.each(UNDER_EMPTY_CACHE)('%s: memory drops back after peaks, so the job already empties its cache: not told to again', (id) => {
    const f = leakOf(id);
    expect(f?.pattern).toBe('despite_empty_cache');
    expect(f?.fix).toMatch(/loss\.item\(\)/);
    expect(f?.fix).not.toMatch(/empty_cache/);
  });

  it('the text digest says how the memory grows next to the numbers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-pattern-text-'));
    const traces = readFileSync(TRACES_PATH, 'utf8').trim().split('\n').map(decodeTrace);
    const file = join(dir, 'samples.jsonl');
    writeFileSync(
      file,
      traces
        .find((t) => t.id === 'creep-50-seg20-sawtooth')!
        .samples.map((s) => JSON.stringify(s))
        .join('\n') + '\n',
    );
    const { stdout } = await run(process.execPath, [BIN, 'digest', '--samples', file], { maxBuffer: 64 << 20, timeout: 60_000 });
    expect(stdout).toMatch(/already empties its cache/);
    expect(stdout).toMatch(/Fix: Do not keep the previous step's loss alive/);
  }, 90_000);
});
