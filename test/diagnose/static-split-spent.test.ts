// Issue 23, static memory that does not fit: when the load already spreads the model over the GPUs (accelerate's
// load_checkpoint_and_dispatch / dispatch_model, from_pretrained's device_map="auto"), splitting it over them is a
// lever already pulled: the weights do not fit the GPUs together, so fewer bytes per weight (a quantized checkpoint)
// or a smaller model come first. A digit inside a card's name ("T4卡", "3090卡") is no GPU count; "卡x2" is.
// And a card whose name fixes its size (the data-centre A10 is sold with 24 GB only) sizes the budget: a 13B model's
// 16-bit weights (~24.2 GiB) fill it, so quantizing leads over a serving engine's knobs.
// Real examples: blind10 6263 and 6244 (public threads, URLs in their cases.json); the other texts are synthetic
// variants written from the principle. In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { worldSize } from '../../src/diagnose/levers/zero.js';
import { readDispatchedOverCards } from '../../src/diagnose/levers/static-order.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const QUANTIZE_FIRST = /No batch size fixes that: load the model quantized/;
const SPLIT = /The weights fill one card while/;
const OOM_LOAD = (gpu: number) =>
  `Traceback (most recent call last):\n  File "demo.py", line 31, in <module>\n    model = load_checkpoint_and_dispatch(\n  File "/usr/lib/python3.10/site-packages/accelerate/utils/modeling.py", line 149, in set_module_tensor_to_device\n    new_value = value.to(device)\nRuntimeError: CUDA out of memory. Tried to allocate 288.00 MiB (GPU ${gpu}; 14.62 GiB total capacity; 13.28 GiB already allocated; 243.38 MiB free; 13.30 GiB reserved in total by PyTorch)`;

describe('a load already dispatched over the GPUs: the split is spent, fewer bytes per weight first', () => {
  it('real blind10/6263: MOSS on "T4卡x2" through load_checkpoint_and_dispatch: 2 GPUs, quantize first', async () => {
    const d = await firstOfCase('blind10', '6263');
    expect(d?.facts.worldSize).toBe(2);
    expect(first(d)).not.toMatch(SPLIT);
    expect(first(d)).toMatch(QUANTIZE_FIRST);
  });

  // synthetic: the dispatch in each of its forms, several GPUs stated
  it.each([
    ['load_checkpoint_and_dispatch on 2 x T4', `2 x T4 GPUs\n${OOM_LOAD(1)}`],
    [
      'device_map="auto" on 4 GPUs',
      `model = AutoModelForCausalLM.from_pretrained(path, device_map="auto")\nCUDA_VISIBLE_DEVICES=0,1,2,3 on 4 GPUs\n${OOM_LOAD(3).replace('load_checkpoint_and_dispatch(', 'from_pretrained(')}`,
    ],
    ['dispatch_model, Chinese', `两张卡，3090卡x2\nmodel = dispatch_model(model, device_map=device_map)\n${OOM_LOAD(1)}`],
  ])('synthetic: %s', async (_name, text) => {
    expect(first(await diagnosePaste(text))).not.toMatch(SPLIT);
  });

  // synthetic near misses: a dispatch undone by a move to one card, and no dispatch at all: splitting is still the lever
  it.each([
    ['.to(device) after device_map="auto"', 'model = AutoModelForCausalLM.from_pretrained(\n    "Qwen/Qwen1.5-14B-Chat",\n    device_map="auto"\n).to(device)'],
    [
      '.cuda() after device_map="auto"',
      'model = AutoModelForCausalLM.from_pretrained("internlm/internlm-chat-7b", device_map="auto", trust_remote_code=True).cuda()',
    ],
    ['.eval().cuda() after device_map="balanced"', 'model = AutoModel.from_pretrained(path, device_map="balanced").eval().cuda()'],
  ])('synthetic near miss: %s undoes the split', (_name, code) => {
    expect(readDispatchedOverCards(code)).toBe(false);
    expect(readDispatchedOverCards(code.replace(/(?:\.eval\(\))?\.(?:to\(device\)|cuda\(\))$/, ''))).toBe(true);
  });
  // synthetic near miss: several GPUs and no dispatch: splitting is still the lever
  it('synthetic near miss: CUDA_VISIBLE_DEVICES=0,1 and one process full, no dispatch: split first', async () => {
    const text = `CUDA_VISIBLE_DEVICES=0,1 python serve.py\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 132.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 20.00 MiB is free. Including non-PyTorch memory, this process has 23.40 GiB memory in use.`;
    expect(first(await diagnosePaste(text))).toMatch(SPLIT);
  });
});

describe('a GPU count is not read from a digit inside the card name', () => {
  it.each([
    ['T4卡x2', 2],
    ['ubuntu2204/nvidia T4卡 x 2', 2],
    ['用了8卡A100', 8],
    ['4张卡', 4],
    ['3090卡上跑', undefined],
    ['nvidia T4卡', undefined],
  ])('synthetic: %s -> %s', (text, n) => {
    expect(worldSize(text)).toBe(n);
  });
});

describe('a card whose name fixes its size sizes the budget: 16-bit weights that fill it are quantized first', () => {
  it('real blind10/6244: vLLM LLM() with a 13B model on an A10: quantize before the serving knobs', async () => {
    const d = await firstOfCase('blind10', '6244');
    expect(d?.facts.gpuModelMemoryMiB).toBe(24576);
    expect(first(d)).toMatch(/^The weights alone fill the card: 13B/);
  });
  it('synthetic: a 13B chat model in fp16 on one A10 24GB GPU, transformers generate()', async () => {
    const d = await diagnosePaste('Running Llama-2-13b-chat-hf on an NVIDIA A10\nmodel.generate(**inputs)\ntorch.cuda.OutOfMemoryError: CUDA out of memory.');
    expect(first(d)).toMatch(/quantiz/i);
  });
  it('synthetic near miss: a 7B model on an A10 leaves room: not the weights-fill reply', async () => {
    const d = await diagnosePaste('Running Llama-2-7b-chat-hf on an NVIDIA A10\nmodel.generate(**inputs)\ntorch.cuda.OutOfMemoryError: CUDA out of memory.');
    expect(first(d)).not.toMatch(/^The weights alone fill the card/);
  });
  it('synthetic near miss: an A100 is no A10', async () => {
    const d = await diagnosePaste('Running Llama-2-13b-chat-hf on an NVIDIA A100\nmodel.generate(**inputs)\ntorch.cuda.OutOfMemoryError: CUDA out of memory.');
    expect(d?.facts.gpuModelMemoryMiB).toBeUndefined();
  });
});
