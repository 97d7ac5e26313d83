// The dev evaluation over real labelled logs kept in the repo, run against the CLI as the project's
// scorer runs it: test/fixtures/eval-dev (the project's dev set, copied from its shared eval folder;
// every log's public source is in its cases.json) and test/fixtures/eval-extra (held out: no rule example).
import { describe, expect, it } from 'vitest';
import { scoreDir, scoreLine } from './eval-score.js';

const misses = (rows: string[]) => rows.filter((r) => !/: ok /.test(r) || /not concrete|HARMFUL/.test(r)).join('\n');

describe('dev evaluation (real logs in test/fixtures/eval-dev and test/fixtures/eval-extra)', () => {
  it('dev set: top-1 >= 90%, harmful = 0, concrete fixes wherever the log states the value', { timeout: 120_000 }, async () => {
    const s = await scoreDir(new URL('../fixtures/eval-dev', import.meta.url).pathname);
    console.log(`dev eval: ${scoreLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(30);
    expect(s.top1 / s.n, misses(s.rows)).toBeGreaterThanOrEqual(0.9);
    expect(s.harmful, misses(s.rows)).toBe(0);
    expect(s.concrete, misses(s.rows)).toBe(s.concreteOf);
    expect(s.failed, misses(s.rows)).toBe(0);
  });

  it('held-out real logs (test/fixtures/eval-extra, not used as rule examples): top-1 >= 90%, harmful = 0', { timeout: 120_000 }, async () => {
    const s = await scoreDir(new URL('../fixtures/eval-extra', import.meta.url).pathname);
    console.log(`eval-extra: ${scoreLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(60);
    expect(s.top1 / s.n, misses(s.rows)).toBeGreaterThanOrEqual(0.9);
    expect(s.harmful, misses(s.rows)).toBe(0);
    expect(s.failed, misses(s.rows)).toBe(0);
  });
});
