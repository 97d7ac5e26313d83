// Issue 23, the framework_version lever: a report that went back to an earlier release and says that fixed it
// ("reverting back to 0.1.29 fixed", "revert to v0.1.14 OK", "downgrading to 0.5.3 solved it", "回退到 0.3.1 就正常了")
// tells the report's own experiment: that release runs the same workload, so the release is the lever and comes first
// (levers/version-regression.ts). A revert that did not help ("reverting ... did not fix it", "still fails") tells
// nothing of the kind. Real threads: blind12 7175 (read split) and serve14 7480 (tuned group; URLs in their cases.json);
// the other texts are synthetic variants written from the principle. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readToldRegression } from '../../src/diagnose/levers/version-regression.js';

const VERSION_FIRST = /^The report says the same run works on /;

describe('real threads', () => {
  it('blind12/7175: Ollama 0.1.29 -> 0.1.30, "reverting back to 0.1.29 fixed": the version first, not num_ctx', async () => {
    const first = (await firstOfCase('blind12', '7175'))?.fixes[0]?.summary ?? '';
    expect(first).toMatch(VERSION_FIRST);
    expect(first).toContain('Downgrade to 0.1.29');
  });
  it('serve14/7480: "Out of memory at v0.1.17, revert to v0.1.14 OK"', async () => {
    const first = (await firstOfCase('serve14', '7480'))?.fixes[0]?.summary ?? '';
    expect(first).toMatch(VERSION_FIRST);
    expect(first).toContain('Downgrade to 0.1.14');
  });
});

describe('the forms (synthetic variants)', () => {
  it.each([
    ['After updating to 0.5.4 the model OOMs. Downgrading to 0.5.3 solved it.', '0.5.3', '0.5.4'],
    ['CUDA out of memory with 2.3.1; rolled back to 2.2.0 and it works again', '2.2.0', '2.3.1'],
    ['OOM since the update to v0.9.2, going back to v0.9.1 fixes it', '0.9.1', '0.9.2'],
    ['升级到 0.3.2 后显存溢出，回退到 0.3.1 就正常了', '0.3.1', '0.3.2'],
  ])('%s', (text, good, bad) => {
    const r = readToldRegression(text);
    expect(r?.good).toContain(good);
    expect(r?.bad).toContain(bad);
    expect(r?.first).toBe(true);
  });
  it('near miss: a revert that did not help tells no working release', () => {
    expect(readToldRegression('Reverting to 0.1.29 did not fix it, still OOM on 0.1.30')?.good).toBeUndefined();
    expect(readToldRegression('I tried reverting to 0.1.29 but it still fails')).toBeUndefined();
  });
  it('a served OOM with a revert that fixed it: the version leads the reply', async () => {
    const paste = [
      'CUDA error: out of memory',
      '  current device: 0, in function alloc at ggml-cuda.cu:445',
      'Started after upgrading ollama from 0.2.0 to 0.2.1, reverting to 0.2.0 fixed it.',
    ].join('\n');
    expect((await diagnosePaste(paste))?.fixes[0]?.summary ?? '').toMatch(VERSION_FIRST);
  });
});
