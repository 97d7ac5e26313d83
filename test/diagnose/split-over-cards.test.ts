// Issue 23, static memory that does not fit: making GPUs visible or launching one process per GPU does not split a
// model; each process loads all of it on its own first GPU. Outside training, where the 16-bit weights exceed one card
// but the stated GPUs hold them together, or one process alone fills one card with several GPUs stated, the first
// lever is splitting the model across the cards (device_map="auto", tensor parallelism), before quantizing. An HF run
// that only predicts or evaluates (do_predict / do_eval without do_train) is not training, whatever adapter it loads.
// Real examples: blind6 3801 and blind7 3970 (public threads, URLs in their cases.json); the other texts are synthetic
// variants written from the principle. In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const SPLIT = /device_map="auto"[^.]{0,80}|tensor parallel/;
const OOM = (held: string, total: string) =>
  `torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 132.00 MiB. GPU 0 has a total capacity of ${total} GiB of which 20.00 MiB is free. Including non-PyTorch memory, this process has ${held} GiB memory in use.`;

describe('weights that fill one card while several GPUs are there: split the model across them', () => {
  it('real blind6/3801: LLaMA-Factory do_predict of a 72B model on 8 x A100 80G: split, not QLoRA', async () => {
    const d = await firstOfCase('blind6', '3801');
    expect(d?.facts.training).toBe(false);
    expect(first(d)).toMatch(SPLIT);
    expect(first(d)).not.toMatch(/QLoRA/);
  });
  it('real blind7/3970: CUDA_VISIBLE_DEVICES=0,1,2,3 "has no effect", one process holds 22.9 of 23.6 GiB', async () => {
    expect(first(await firstOfCase('blind7', '3970'))).toMatch(SPLIT);
  });

  // synthetic: the GPUs stated in each form, the weights sized or this process's share given
  it.each([
    ['a 70B model on 4 x A100 80GB', 'python chat.py --model Llama-2-70b-chat-hf on 4 x A100 80GB\nCUDA out of memory when loading the model'],
    ['CUDA_VISIBLE_DEVICES with one process full', `CUDA_VISIBLE_DEVICES=0,1 python serve.py\n${OOM('23.40', '23.65')}`],
    ['多卡, Chinese', `多卡部署还是爆显存\n${OOM('23.40', '23.65')}`],
  ])('synthetic: %s', async (_name, text) => {
    expect(first(await diagnosePaste(text))).toMatch(SPLIT);
  });

  // synthetic controls: training on several GPUs shards (ZeRO / FSDP), one GPU keeps the weights' own levers
  it('synthetic control: a full fine-tune over 8 GPUs is not split with device_map', async () => {
    const d = await diagnosePaste('torchrun --nproc_per_node 8 train.py --model Llama-2-70b-hf --full_finetune\nloss.backward()\nCUDA out of memory');
    expect(first(d)).not.toMatch(/device_map="auto"/);
  });
  it('synthetic control: one GPU stated keeps quantize first', async () => {
    const d = await diagnosePaste('python chat.py --model Llama-2-70b-chat-hf on one A100 80GB\nCUDA out of memory when loading the model');
    expect(first(d)).not.toMatch(/split it across the cards/i);
  });
  it('synthetic: do_predict without do_train is not training; with do_train it is', async () => {
    const cfg = (extra: string) => `stage: sft\nfinetuning_type: lora\n${extra}\nCUDA out of memory`;
    expect((await diagnosePaste(cfg('do_predict: true')))?.facts.training).toBe(false);
    expect((await diagnosePaste(cfg('do_train: true\ndo_eval: true')))?.facts.training).toBe(true);
  });
});
