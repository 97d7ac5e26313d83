// Fragmentation only when the budget fits (levers/cache-capacity.ts, issue 23): an idle allocator cache that covers the
// request is "fragmentation" (expandable_segments first) only when the live tensors plus the request leave real room on
// the card and the static part the log sizes fits. When allocated + requested take 85% of the card or more, or the
// model's weights exceed it, no cache layout makes room: capacity is the verdict and allocator settings are not the
// first fix. A cache many times the request stays fragmentation. Real read-split threads beside synthetic variants.
import { describe, expect, it } from 'vitest';
import { firstOfCase, diagnosePaste, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const ALLOCATOR = /expandable_segments|max_split_size/;

// PyTorch >= 2.1's message: allocated and reserved-but-unallocated stated, the device's free beside them.
const oom2 = (tried: string, total: string, free: string, inUse: string, allocated: string, idle: string) =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried}. GPU 0 has a total capacity of ${total} of which ${free} is free. Including non-PyTorch memory, this process has ${inUse} memory in use. Of the allocated memory ${allocated} is allocated by PyTorch, and ${idle} is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.`;
// PyTorch 1.x's message: allocated and reserved in total.
const oom1 = (tried: string, total: string, allocated: string, free: string, reserved: string) =>
  `RuntimeError: CUDA out of memory. Tried to allocate ${tried} (GPU 0; ${total} total capacity; ${allocated} already allocated; ${free} free; ${reserved} reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.`;

describe('real read-split threads: live tensors fill the card, so capacity first (allocator settings not first)', () => {
  it.each([
    ['blind8', '5610', '7B full fine-tune under FSDP: 28.42 of 31.75 GiB allocated + 388 MiB (91%)'],
    ['blind8', '5642', 'training demo settings: 9.08 of 10.73 GiB allocated + 324 MiB (88%), PyTorch 1.0 "cached"'],
    ['blind11', '6662', 'fp32 video models: 20.08 of 23.70 GiB allocated + 880 MiB (88%)'],
    ['blind12', '7154', '20B model on a 24 GB card: 20.43 of 23.60 GiB allocated + 1.98 GiB (95%), weights over the card'],
  ])('%s/%s: %s', async (group, n) => {
    const d = await firstOfCase(group, n);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).not.toMatch(ALLOCATOR);
  });

  it('the allocator setting stays, as a later step once the run fits (never first)', async () => {
    for (const [group, n] of [
      ['blind11', '6662'],
      ['blind12', '7154'],
    ]) {
      const fixes = (await firstOfCase(group, n))?.fixes ?? [];
      expect(fixes.findIndex((f) => ALLOCATOR.test(f.summary))).toBeGreaterThan(0);
    }
  });

  it('blind12/7154: the weights over the card are the first fix (quantize)', async () => {
    expect(first(await firstOfCase('blind12', '7154'))).toMatch(/quantiz|4-bit|4 bits/);
  });

  it('near miss, blind8/5627: the idle cache covers the request with 40% of the card not live: still fragmentation', async () => {
    const d = await firstOfCase('blind8', '5627');
    expect(d?.category).toBe('fragmentation');
    expect(first(d)).toMatch(ALLOCATOR);
  });
});

describe('synthetic variants written from the principle', () => {
  it.each([
    [
      'synthetic: PyTorch 2.x message, 20.90 + 1.00 of 23.65 GiB (93%), 1.80 GiB idle',
      oom2('1.00 GiB', '23.65 GiB', '412.00 MiB', '22.80 GiB', '20.90 GiB', '1.80 GiB'),
    ],
    ['synthetic: PyTorch 1.x message, 13.90 + 0.50 of 15.90 GiB (91%), 1.30 GiB idle', oom1('512.00 MiB', '15.90 GiB', '13.90 GiB', '100.00 MiB', '15.20 GiB')],
    [
      'synthetic: Chinese report around the message, 37.0 + 2.0 of 44.5 GiB (88%), 3.0 GiB idle',
      `训练跑到第一个 step 就报显存不足，显卡是 48G 的\n${oom2('2.00 GiB', '44.52 GiB', '300.00 MiB', '40.10 GiB', '37.00 GiB', '3.00 GiB')}`,
    ],
    [
      'synthetic: a 13B model in fp16 named on a 16 GB card (weights over the card), 9.0 + 1.0 of 15.7 GiB (64%)',
      `model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-13b-hf", torch_dtype=torch.float16).to("cuda")\n${oom2('1.00 GiB', '15.70 GiB', '200.00 MiB', '15.40 GiB', '9.00 GiB', '6.30 GiB')}`,
    ],
  ])('%s: cuda_oom, allocator settings not first', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).not.toMatch(ALLOCATOR);
  });

  it.each([
    [
      'synthetic near miss: 6.00 + 4.00 of 15.70 GiB (64%), 6.00 GiB idle covers 4 GiB',
      oom2('4.00 GiB', '15.70 GiB', '1.20 GiB', '12.40 GiB', '6.00 GiB', '6.00 GiB'),
    ],
    ['synthetic near miss: PyTorch 1.x, 5.00 + 2.00 of 10.76 GiB (65%), 3.00 GiB idle', oom1('2.00 GiB', '10.76 GiB', '5.00 GiB', '1.40 GiB', '8.00 GiB')],
    [
      'synthetic near miss: a full card (86%) whose idle cache is 20 times the request (10 GiB for 512 MiB)',
      oom2('512.00 MiB', '79.25 GiB', '200.00 MiB', '78.50 GiB', '68.00 GiB', '10.00 GiB'),
    ],
    [
      'synthetic near miss: full training of a 13B model (16 B/param over the card, often sharded unsaid) at 50% live, 8 GiB idle',
      `[rank3]:   File "train.py", line 120, in main\n[rank3]:     trainer.train()\nmodel_name_or_path: meta-llama/Llama-2-13b-hf\n[rank3]: ${oom2('6.00 GiB', '79.15 GiB', '2.10 GiB', '77.00 GiB', '34.00 GiB', '8.00 GiB')}`,
    ],
  ])('%s: still fragmentation', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('fragmentation');
    expect(first(d)).toMatch(ALLOCATOR);
  });
});

describe("the report's own experiment outranks the idle cache: a smaller input worked, a larger one failed", () => {
  const cache = oom1('2.14 GiB', '11.00 GiB', '3.89 GiB', '1.63 GiB', '7.85 GiB');
  it.each([
    ['synthetic: two image sizes, the smaller worked', `${cache}\n512x512 works fine, 2048x2048 gives OOM`],
    [
      'synthetic: two context lengths, the shorter worked',
      `${cache}\nI am able to run with a context length of 2048 without a problem, but when I enlarge the context length to 4096 it runs out of memory`,
    ],
    ['synthetic: Chinese report, two image sizes', `${cache}\n768*768 的图可以跑，1536*1536 就爆显存`],
  ])('%s: the input first, the allocator later', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/input's size decides|输入的尺寸|尺寸/);
    expect(first(d)).not.toMatch(ALLOCATOR);
  });

  it('synthetic near miss: one large input named, no smaller one shown to work: still fragmentation', async () => {
    const d = await diagnosePaste(`OOM when running a long video (12 minutes)\n${cache}`);
    expect(d?.category).toBe('fragmentation');
  });
});
