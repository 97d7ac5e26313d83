// Issue 23, another card: a report that asks to run on another GPU than the one that ran out ("how do I make it use
// GPU1", "如何改代码使它使用GPU1") gets how to select it first (CUDA_VISIBLE_DEVICES before CUDA starts, or the device
// string), before a smaller batch on the card that failed. Real example: blind7 3969 (public thread, URL in its
// cases.json); the other texts are synthetic variants written from the principle. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const OOM0 =
  'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.60 GiB already allocated; 0 bytes free; 3.70 GiB reserved in total by PyTorch)';
const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('the report asks for another GPU: select it first', () => {
  it('real blind7/3969: two GPUs, GPU 0 a 2 GB card, "如何改代码使它使用GPU1"', async () => {
    const d = await firstOfCase('blind7', '3969');
    expect(first(d)).toMatch(/CUDA_VISIBLE_DEVICES=1/);
    expect(d?.fixes[0]?.changes).not.toHaveProperty('batch');
  });
  it.each([
    ['how can I use GPU 1', `How can I use GPU 1 instead? It always runs on the first card.\n${OOM0}`],
    ['want to run on cuda:2', `I want to run on cuda:2, the bigger card.\n${OOM0}`],
    ['怎么换到卡1', `怎么换到卡1上跑？\n${OOM0}`],
  ])('synthetic: %s', async (_name, text) => {
    expect(first(await diagnosePaste(text))).toMatch(/CUDA_VISIBLE_DEVICES=[12]/);
  });
  it('synthetic control: asking for the GPU that failed, or no GPU asked, keeps the usual reply', async () => {
    const failedOn1 = OOM0.replace('(GPU 0;', '(GPU 1;');
    expect(first(await diagnosePaste(`How can I use GPU 1 with less memory?\n${failedOn1}`))).not.toMatch(/asks to run on GPU/);
    expect(first(await diagnosePaste(OOM0))).not.toMatch(/asks to run on GPU/);
  });
});
