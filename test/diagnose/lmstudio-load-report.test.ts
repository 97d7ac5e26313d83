// A serving tool is known by its own fixed output, not by its name in prose: LM Studio's load-failure report
// ("title": "Failed to load model", "errorData": {"n_ctx": N, ...}, its "vram_recommended_capacity" memory block), its
// model folder (~/.cache/lm-studio/) and its CLI (lms load / lms server). It serves, so there is no training batch to
// halve, and the context its report states is the first of its knobs when it is long (knowledge/tools.yaml,
// levers/generation-length.ts). Real threads: serve14 7484 (tuned group) and the near miss blind11 6673 (read split:
// vMLX, which names LM Studio only as the tool that works); the other texts are synthetic variants. In process.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readGenerationLength } from '../../src/diagnose/levers/generation-length.js';

const REPORT = (ctx: number) =>
  [
    '{',
    '  "title": "Failed to load model",',
    '  "cause": "",',
    `  "errorData": { "n_ctx": ${ctx}, "n_batch": 512, "n_gpu_layers": 33 },`,
    '  "data": { "memory": { "ram_capacity": "31.9 GB", "ram_unused": "2.1 GB" },',
    '    "gpu": { "type": "NvidiaCuda", "vram_recommended_capacity": "12.00 GB", "vram_unused": "10.80 GB" } }',
    '}',
    'It fails with an out of memory error.',
  ].join('\n');

describe("LM Studio's load-failure report", () => {
  it('serve14/7484: n_ctx 1048576 for a 70B model: LM Studio, the context first, no batch', async () => {
    const first = (await firstOfCase('serve14', '7484'))?.fixes[0]?.summary ?? '';
    expect(first).toMatch(/^LM Studio serves with a long context \(n_ctx: 1048576\)/);
    expect(first).not.toMatch(/batch 1/);
  });
  it('blind11/6673 (near miss): a vMLX report that names LM Studio in prose keeps its own (Metal) reading', async () => {
    expect((await firstOfCase('blind11', '6673'))?.fixes[0]?.summary ?? '').not.toMatch(/LM Studio/);
  });
  it('synthetic: the report\'s "n_ctx" is the context, read without its quotes', () => {
    expect(readGenerationLength(REPORT(131072))).toMatchObject({ generateLen: 131072, generateLenSetting: 'n_ctx: 131072' });
  });
  it('synthetic: a 65536 context in the report leads with the context', async () => {
    expect((await diagnosePaste(REPORT(65536)))?.fixes[0]?.summary ?? '').toMatch(/^LM Studio serves with a long context/);
  });
  it('synthetic: a 4096 context is no long context, and still no training batch', async () => {
    const first = (await diagnosePaste(REPORT(4096)))?.fixes[0]?.summary ?? '';
    expect(first).not.toMatch(/long context/);
    expect(first).not.toMatch(/batch 1/);
  });
});
