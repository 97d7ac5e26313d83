// The dev evaluation from ../shared/eval, run against this CLI exactly as the scorers run it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const shared = new URL('../../../shared/eval/', import.meta.url).pathname;
const present = existsSync(shared);
if (!present && process.env.CI === 'true') throw new Error(`${shared} is missing: the dev evaluation must run in CI`);

const lastLine = (script: string, ...args: string[]) => {
  const out = execFileSync('node', [shared + script, ...args], { encoding: 'utf8', timeout: 280_000 });
  return out.trim().split('\n').at(-1)!;
};

describe.skipIf(!present)('dev evaluation (real logs and outputs in ../shared/eval)', () => {
  it('diagnosis: top-1 >= 90%, harmful = 0, concrete fixes wherever the log states the value', { timeout: 300_000 }, () => {
    const line = lastLine('score-diagnose.mjs');
    const m = /top1 (\d+)\/(\d+) .*harmful (\d+), concrete (\d+)\/(\d+), failed (\d+)/.exec(line);
    expect(m, line).not.toBeNull();
    const [, top1, n, harmful, concrete, concreteOf, failed] = m!.map(Number);
    console.log(`dev eval: ${line}`);
    expect(top1 / n).toBeGreaterThanOrEqual(0.9);
    expect(harmful).toBe(0);
    expect(concrete).toBe(concreteOf);
    expect(failed).toBe(0);
  });

  it('readings: >= 95% of the fixture facts', { timeout: 300_000 }, () => {
    const line = lastLine('score-readings.mjs');
    const m = /readings (\d+)\/(\d+) checks passed .*failed (\d+)/.exec(line);
    expect(m, line).not.toBeNull();
    console.log(`readings eval: ${line}`);
    expect(Number(m![1]) / Number(m![2])).toBeGreaterThanOrEqual(0.95);
    expect(Number(m![3])).toBe(0);
  });

  it('held-out real logs (test/eval-extra, not used as rule examples): top-1 >= 90%, harmful = 0', { timeout: 300_000 }, () => {
    const extra = new URL('../eval-extra', import.meta.url).pathname;
    const line = lastLine('score-diagnose.mjs', '--cases', extra);
    const m = /top1 (\d+)\/(\d+) .*harmful (\d+), concrete (\d+)\/(\d+), failed (\d+)/.exec(line);
    expect(m, line).not.toBeNull();
    console.log(`eval-extra: ${line}`);
    expect(Number(m![1]) / Number(m![2])).toBeGreaterThanOrEqual(0.9);
    expect(Number(m![3])).toBe(0);
    expect(Number(m![6])).toBe(0);
  });
});
