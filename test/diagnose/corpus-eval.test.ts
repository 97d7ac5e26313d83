// The corpus of real logs with expert expectations (test/fixtures/untuned): the tuned split (llm/) and
// the untuned split (vision/), scored with the CLI's own code in process (readLogFile, diagnose,
// toJsonContract: same JSON as `gpu-doctor diagnose --json`). Figures are printed; floors catch regressions.
import { describe, expect, it } from 'vitest';
import { expertLine, scoreExpertDir } from './eval-score.js';

const misses = (rows: string[]) => rows.filter((r) => !r.endsWith(': ok')).join('\n');

describe('expert expectations on real logs', () => {
  it('tuned split (llm/): category >= 94%, no harmful first fix, first-fix lever >= 78%', { timeout: 120_000 }, async () => {
    const s = await scoreExpertDir(new URL('../fixtures/untuned/llm', import.meta.url).pathname);
    console.log(`tuned (llm): ${expertLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(100);
    expect(s.failed, misses(s.rows)).toBe(0);
    expect(s.harmful, misses(s.rows)).toBe(0);
    expect(s.category / s.n).toBeGreaterThanOrEqual(0.94);
    expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.78);
  });

  it('untuned split (vision/): no harmful first fix; floors at the measured level', { timeout: 120_000 }, async () => {
    const s = await scoreExpertDir(new URL('../fixtures/untuned/vision', import.meta.url).pathname);
    // Misses are not printed per case: nobody tunes on this split.
    console.log(`untuned (vision): ${expertLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(100);
    expect(s.failed).toBe(0);
    expect(s.harmful).toBe(0);
    // measured 82/103 category, 67/103 lever at this floor's last raise
    expect(s.category / s.n).toBeGreaterThanOrEqual(0.78);
    expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.62);
  });
});
