// Issue 23, the static part of the memory budget: when weights + gradients + optimizer state do not fit, the batch
// is never the lever, and the arithmetic decides which lever comes first (src/diagnose/levers/static-order.ts):
// full training shards over the launch's GPUs where 16/N B/param fits, else offloads the optimizer state where
// 4 B/param fits, else (a full fine-tune not asked for by name) a 4-bit base with LoRA; a diffusion pipeline whose
// weights fill the card offloads its idle models before quantizing; where the static part fits, the activations'
// levers stay first. Real cases from the tuned group static8 (and blind/1027), then synthetic variants written from
// the principle over model sizes, cards, GPU counts, stated or unstated full fine-tunes and languages.
import { describe, expect, it } from 'vitest';
import { diagnoseOutput, diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { leverNamedFirst } from './eval-score.js';
import { extractSettings } from '../../src/diagnose/settings.js';
import { modelParamsB, statedGpuMemoryMiB, weightsDtype } from '../../src/diagnose/model-facts.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0];
/** The scorer's own stricter check: `lever` is in the first fix and no other lever is named as an action before it. */
const namedFirst = (d: CaseDiagnosis | undefined, lever: string) => leverNamedFirst(lever, first(d), d?.category);
const noBatchChange = (d: CaseDiagnosis | undefined) => expect(first(d)?.changes?.batch).toBeUndefined();

// PyTorch 2.x's message, with the card's total and this process's own use (synthetic figures).
const oom = (totalGiB: number) =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 500.00 MiB. GPU 0 has a total capacity of ${totalGiB} GiB of which 90.00 MiB is free. Including non-PyTorch memory, this process has ${(totalGiB - 0.1).toFixed(2)} GiB memory in use. Of the allocated memory ${(totalGiB - 1.2).toFixed(2)} GiB is allocated by PyTorch, and 600.00 MiB is reserved by PyTorch but unallocated.`;

describe('real threads (static8, tuned): the budget names the lever that shrinks the static part', () => {
  it('3300: Llama-2-7B "without any PEFT" on one A100-SXM4-80GB: full training (the negated PEFT is no adapter), offload the optimizer first', async () => {
    const d = await firstOfCase('static8', '3300');
    expect(first(d)?.summary).toMatch(/^Full training keeps/);
    expect(first(d)?.summary).toContain('4 B/param');
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
    noBatchChange(d);
  });

  it('3301: Llama-2-13B on 2 x A800 at batch 1: 16/2 B/param does not fit the largest A800, so offload, with the GPUs counted', async () => {
    const d = await firstOfCase('static8', '3301');
    expect(first(d)?.summary).toContain('16/2 = 8 B/param');
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });

  it('3304: "fully fine-tune LLaMA 7B" on A100s: the size read after the family name, and no "128 -> 64" batch cut', async () => {
    const d = await firstOfCase('static8', '3304');
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
    noBatchChange(d);
  });

  it('3307: Vicuna-13B on 8 GB cards beside a tried "vicuna-7B-GPTQ-4bit": that 4-bit name is another model, the 13B is quantized first', async () => {
    const d = await firstOfCase('static8', '3307');
    expect(d?.facts.dtype).toBeUndefined();
    expect(namedFirst(d, 'quantize_or_smaller_model')).toBe(true);
  });

  it('3308: an SDXL pipeline moved whole onto a 4 GB card: model CPU offload before quantizing', async () => {
    const d = await firstOfCase('static8', '3308');
    expect(first(d)?.summary).toContain('enable_model_cpu_offload');
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });

  it('blind/1027: chatglm3-6B training on a T4 (full fine-tune not asked for by name): even 4 B/param does not fit, so QLoRA', async () => {
    const d = await firstOfCase('blind', '1027');
    expect(first(d)?.summary).toContain('quantized to 4 bits');
    expect(namedFirst(d, 'quantize_or_smaller_model')).toBe(true);
  });

  it('controls: where the static part fits, the activations keep their levers (3315 the batch, 3319 the sequence length)', async () => {
    const kv = await firstOfCase('static8', '3315');
    expect(first(kv)?.summary).not.toMatch(/^Full training keeps/);
    const long = await firstOfCase('static8', '3319');
    expect(namedFirst(long, 'imgsz')).toBe(true);
  });
});

describe('synthetic: full training over the card, the lever from the arithmetic (synthetic pastes)', () => {
  it('13B full fine-tune over 8 x 80 GB: 16/8 = 2 B/param fits, so shard across them (ZeRO-3 / FSDP) first', async () => {
    const d = await diagnosePaste(
      `torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-2-13b-hf --finetuning_type full --per_device_train_batch_size 1\n${oom(79.15)}`,
    );
    expect(first(d)?.summary).toContain('16/8 = 2 B/param');
    expect(first(d)?.summary).toMatch(/Shard that state across the GPUs first/);
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
    noBatchChange(d);
  });

  it('7B full fine-tune on one 80 GB card: 7B x 16 B/param > 80 GB, the optimizer state is offloaded (4 B/param stays)', async () => {
    const d = await diagnosePaste(`Full fine-tuning of Llama-2-7b-hf on a single GPU\npython train.py --per_device_train_batch_size 2\n${oom(79.15)}`);
    expect(first(d)?.summary).toContain('7B × 16 B/param');
    expect(first(d)?.summary).toContain('4 B/param ≈ 26.08 GiB');
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
    noBatchChange(d);
  });

  it('70B full fine-tune over 8 x 80 GB: 16/8 does not fit, ZeRO-3 with the optimizer offloaded leaves 4/8 B/param', async () => {
    const d = await diagnosePaste(`deepspeed --num_gpus 8 train.py --model_name_or_path Llama-2-70b-hf --finetuning_type full\n${oom(79.15)}`);
    expect(first(d)?.summary).toContain('4/8 = 0.5 B/param');
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });

  it('a 32B full fine-tune asked for by name (--sft_type full) on one A800: the parameters are offloaded too, the method kept', async () => {
    const d = await diagnosePaste(`Qwen2.5-32B-Instruct 微调 OOM，一张 A800\nswift sft --model_id_or_path Qwen2.5-32B-Instruct --sft_type full\n显存不足`);
    expect(first(d)?.summary).toContain('offload_param');
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });

  it('6B training on a 16 GB card, full fine-tune not stated: a 4-bit base with LoRA is named first', async () => {
    const d = await diagnosePaste(`fine-tuning chatglm2-6b\n${oom(14.56)}`);
    expect(namedFirst(d, 'quantize_or_smaller_model')).toBe(true);
    noBatchChange(d);
  });

  it('the same in Chinese, a 13B full fine-tune on one A100 80G: the zh reply offloads first and quotes the arithmetic', async () => {
    const paste = `全参数微调 Baichuan2-13B，单卡 A100 80G，batch_size=1 还是 OOM\n${oom(79.35)}`;
    const summary = await diagnoseOutput(['-'], { paste, locale: 'zh' });
    expect(summary).toContain('全量训练在任何激活之前');
    expect(summary).toContain('先把这部分状态 offload 到 CPU');
    expect(summary).toContain('13B × 16 B/param');
  });
});

describe('synthetic: the controls, where no static claim is made (synthetic pastes)', () => {
  it('no card named and full training not measured against any card: no static verdict, the experiment stays', async () => {
    const d = await diagnosePaste('fine-tuning Qwen-7B with my script, getting CUDA out of memory');
    expect(first(d)?.summary ?? '').not.toMatch(/^Full training keeps/);
  });

  it('LoRA on a 7B base with a 32768-token cutoff on 80 GB: the base fits, the sequence length is the lever', async () => {
    const d = await diagnosePaste(
      `model_name_or_path: Qwen/Qwen2-7B-Instruct\nfinetuning_type: lora\ncutoff_len: 32768\nper_device_train_batch_size: 1\nGPU type: NVIDIA A800-SXM4-80GB\n${oom(79.35)}`,
    );
    expect(first(d)?.summary).not.toMatch(/^Full training keeps/);
    expect(namedFirst(d, 'imgsz')).toBe(true);
  });

  it('inference of a 13B on an 8 GB card with no diffusion pipeline: quantize first, not the pipeline offload', async () => {
    const d = await diagnosePaste(`Running vicuna-13b-v1.5 on my 8GB graphics card for inference\n${oom(7.79)}`);
    expect(first(d)?.summary).not.toContain('enable_model_cpu_offload');
    expect(namedFirst(d, 'quantize_or_smaller_model')).toBe(true);
  });

  it('an SDXL pipeline (diffusers progress line) on a 6 GB card: model CPU offload first', async () => {
    const d = await diagnosePaste(
      `Loading pipeline components...: 100%|██████████| 7/7\npipe = StableDiffusionXLPipeline.from_pretrained("stabilityai/stable-diffusion-xl-base-1.0")\npipe.to("cuda")\n${oom(6)}`,
    );
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });
});

describe('the parameters on the host already: the activations fill the card, checkpointing first', () => {
  it('static8/3316 (ColossalAI Gemini, offload_param_frac=1, 7B on 22 GB cards): gradient checkpointing before the batch experiment', async () => {
    const d = await firstOfCase('static8', '3316');
    expect(first(d)?.summary).toContain('offload_param_frac');
    expect(namedFirst(d, 'checkpointing')).toBe(true);
  });

  it('synthetic: a ZeRO-3 config offloading the parameters to CPU, no checkpointing stated: checkpointing first, no batch change', async () => {
    const d = await diagnosePaste(
      `fine-tuning Llama-2-13b-hf with deepspeed\n"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}, "offload_optimizer": {"device": "cpu"}}\n${oom(23.65)}`,
    );
    expect(namedFirst(d, 'checkpointing')).toBe(true);
    noBatchChange(d);
  });

  it('synthetic controls: checkpointing already on, or a long sequence stated, keep their own answers', async () => {
    const on = await diagnosePaste(
      `fine-tuning Llama-2-13b-hf with deepspeed\ngradient_checkpointing: true\n"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}\n${oom(23.65)}`,
    );
    expect(first(on)?.summary ?? '').not.toMatch(/offloaded to the host already/);
    const long = await diagnosePaste(
      `finetuning_type: lora\nfsdp_offload_params: true\ncutoff_len: 32768\nper_device_train_batch_size: 1\nmodel_name_or_path: Qwen/Qwen2-7B\n${oom(79.35)}`,
    );
    expect(first(long)?.summary ?? '').not.toMatch(/offloaded to the host already/);
  });
});

describe('what the budget reads (synthetic lines)', () => {
  it('a card named with its form factor is sized: "A100-SXM4-80GB", "A100-PCIE-40GB"', () => {
    expect(statedGpuMemoryMiB('gpu NVIDIA A100-SXM4-80GB')).toBe(80 * 1024);
    expect(statedGpuMemoryMiB('GPU 0: NVIDIA A100-PCIE-40GB')).toBe(40 * 1024);
  });

  it('a report that moves to another card ends on it: the last card stated is read', () => {
    expect(statedGpuMemoryMiB('I first used a GPU with 24GB memory and it failed. Later I tried a GPU with 48GB memory')).toBe(48 * 1024);
    expect(statedGpuMemoryMiB('It ran on an A100 40GB; on the A100 80GB node it fails too')).toBe(80 * 1024);
    expect(statedGpuMemoryMiB('one RTX 3090 24GB')).toBe(24 * 1024);
  });

  it('a card sold in several sizes, named alone, gives the largest it is sold with', () => {
    expect(extractSettings('full fine-tune on 2 A800 cards').card.familyMaxMiB).toBe(80 * 1024);
    expect(extractSettings('training on a V100').card.familyMaxMiB).toBe(32 * 1024);
    expect(extractSettings('training on an RTX 4090').card.familyMaxMiB).toBeUndefined();
  });

  it('PEFT / LoRA named as what the run is without says full training; named plainly, adapters', () => {
    for (const full of ['finetune llama-7b without any PEFT and Quantization', 'fine-tune all weights rather than LoRA', '全参数微调，不用 LoRA']) {
      const s = extractSettings(full);
      expect(s.run.adapterTraining, full).toBeUndefined();
      expect(s.run.fullTrainingStated, full).toBe(true);
    }
    expect(extractSettings('finetune llama-7b with LoRA r=8').run.adapterTraining).toBe(true);
    expect(extractSettings('fine tuning llama-7b').run.training).toBe(true);
  });

  it('the size after a family name, and a quantized name of another size says nothing of the sized model', () => {
    expect(modelParamsB('I am trying to fully fine-tune LLaMA 7B on ALPACA', undefined)).toBe(7);
    expect(modelParamsB('Qwen2.5 72B on 8 cards', undefined)).toBe(72);
    expect(weightsDtype('running vicuna-13b; also tried TheBloke/vicuna-7B-GPTQ-4bit-128g', 13)).toBeUndefined();
    expect(weightsDtype('model: TheBloke/Llama-2-13B-GPTQ', 13)).toBe('int4');
  });
});
