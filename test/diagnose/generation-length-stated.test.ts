// Principle (issue 23): a generation's OOM whose request is long is fixed by the request's length, not the weights or a
// training batch. The length is read from the context's own names (--context_window / context_length keys, "text
// length=25000", digits grouped as "1_000_000" or "25,000"), and a paste with no frames is a generation where its own
// code generates (model.generate(...), a text-generation pipeline), no training step is shown and the stated length is
// long; a short request's OOM keeps its holder. The real ChatGLM2 report (eval9 4216) beside synthetic variants.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readGenerationLength } from '../../src/diagnose/levers/generation-length.js';

const first = async (text: string) => (await diagnosePaste(text))?.fixes[0]?.summary ?? '';

describe("a long generation request's length comes first", () => {
  it('real: ChatGLM2 generate on a 25,000-token text on an 80 GB card (zh, eval9 4216)', async () => {
    const d = await firstOfCase('eval9', '4216');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].summary).toMatch(/The request is long \(text length=25000\)/);
  });

  it.each([
    ['--context_window 1_000_000', 1_000_000],
    ['context_length: 32k', 32 * 1024],
    ['prompt length = 25,000', 25_000],
    ['max_new_tokens=16384', 16384],
  ])('reads %j as %i tokens (synthetic)', (text, n) => {
    expect(readGenerationLength(text).generateLen).toBe(n);
  });

  it('synthetic: a generate() call at a long stated length, no frames, no training: the length first', async () => {
    const s = await first(
      [
        'OOM on long inputs',
        'inputs = tok(doc, return_tensors="pt").to("cuda")',
        'out = model.generate(**inputs, max_new_tokens=16384)',
        'torch.cuda.OutOfMemoryError: CUDA out of memory.',
      ].join('\n'),
    );
    expect(s).toMatch(/The request is long \(max_new_tokens=16384\)/);
  });

  it('synthetic: a text-generation pipeline at a stated context_length: the length first', async () => {
    const s = await first(
      ['Pipeline OOM', 'pipe = pipeline("text-generation", model=name)', 'context_length = 65536', 'CUDA out of memory. Tried to allocate 9.50 GiB'].join('\n'),
    );
    expect(s).toMatch(/The request is long/);
  });

  it('synthetic: a short request keeps the other levers (no length first)', async () => {
    const s = await first(
      ['OOM in generate', 'out = model.generate(**inputs, max_new_tokens=256)', 'torch.cuda.OutOfMemoryError: CUDA out of memory.'].join('\n'),
    );
    expect(s).not.toMatch(/The request is long/);
  });

  it('synthetic: training code beside the generate call is no generation', async () => {
    const s = await first(
      [
        'OOM while fine-tuning',
        'loss.backward()',
        'sample = model.generate(**inputs, max_new_tokens=16384)',
        'torch.cuda.OutOfMemoryError: CUDA out of memory.',
      ].join('\n'),
    );
    expect(s).not.toMatch(/The request is long/);
  });
});
