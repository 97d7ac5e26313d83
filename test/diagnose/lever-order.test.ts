// Issue 23, the lever order when the evidence points past the batch: the reply ranks its levers, and where the paste's
// evidence decides, the evidenced lever is named first (the scorer's stricter check, leverNamedFirst). Rules of the
// ranking tested here, each with real threads from the tuned group order9 and synthetic variants written from the rule:
// - a stated full fine-tune at a batch of 1 or 2 or none stated: shard / offload the static part lead the experiment
//   (src/diagnose/levers/experiment-order.ts), not another process, the batch or the input;
// - the report says a larger length fails and states the one it ran at: the length leads (levers/smaller-input.ts);
// - one failed request of half the card or more at a batch of 1-2 or none stated is one tensor over whole inputs
//   (attention scores, a full-resolution feature map, logits): the input's size leads (levers/single-tensor.ts);
// - the batch-1 experiment in a run already in half precision leads its static branch with sharding, not "load in bf16";
// - ... and in a run that trains adapters on a frozen base (their optimizer state is small), one input leads;
// - the report's own experiment with one setting (levers/setting-experiment.ts): half precision fits and full precision
//   runs out puts mixed precision first; it fits with gradient checkpointing and not without puts checkpointing first;
// - a tool is named by its own word, not by a directory that contains it ("train_infer_quanti_vllm/" is no vLLM);
// - controls: where the batch is the lever (a smaller batch worked, small inputs), the batch stays first.
import { describe, expect, it } from 'vitest';
import { diagnoseOutput, diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { leverNamedFirst } from './eval-score.js';
import { readSmallerInput } from '../../src/diagnose/levers/smaller-input.js';
import { readHalfPrecisionWorked } from '../../src/diagnose/levers/amp.js';
import { statedGpuMemoryMiB } from '../../src/diagnose/model-facts.js';
import { CHECKPOINTING, readSettingWorked } from '../../src/diagnose/levers/setting-experiment.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0];
const namedFirst = (d: CaseDiagnosis | undefined, lever: string) => leverNamedFirst(lever, first(d), d?.category);
const OOM = 'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB';

describe('real threads (order9, tuned)', () => {
  it('4413: LLaVA-1.5 7B "without LoRA" on 4xA6000 at batch size = 1: sharding / offloading lead, not another process', async () => {
    const d = await firstOfCase('order9', '4413');
    expect(first(d)?.summary).toMatch(/^The paste runs a full fine-tune/);
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
    expect(first(d)?.changes?.batch).toBeUndefined();
  });

  it('4417: 全量微调 on 8 V100 32GB with no batch stated: sharding leads, in Chinese too', async () => {
    const d = await firstOfCase('order9', '4417');
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });

  it('4405: cutoff_len 256 costs 44 GB and "larger cutoff_len like 768" OOMs: the length leads', async () => {
    const d = await firstOfCase('order9', '4405');
    expect(d?.facts.smallerWorked).toBe('cutoff_len 256');
    expect(namedFirst(d, 'imgsz')).toBe(true);
  });

  it('4414: InternVL at batch 1 with --fp16 True on V100 32g: the experiment names sharding before bf16', async () => {
    const d = await firstOfCase('order9', '4414');
    expect(first(d)?.summary).toContain('already computes in half precision');
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });

  it('4406: an SFT script under a directory named "..._vllm" is not read as vLLM serving', async () => {
    const d = await firstOfCase('order9', '4406');
    expect(d?.facts.tool).not.toBe('vllm');
    expect(first(d)?.summary).not.toMatch(/^vLLM is serving/);
  });

  it('controls 4418 and 4420: batch 4 over batch 2 that trained, batch 10 over 8 at 256x256: the batch stays first', async () => {
    for (const n of ['4418', '4420']) {
      const d = await firstOfCase('order9', n);
      expect(namedFirst(d, 'batch')).toBe(true);
    }
  });
});

describe('synthetic: a stated full fine-tune puts the static part first', () => {
  it('English, batch 1 stated, no figures, several GPUs', async () => {
    const d = await diagnosePaste(`Full fine-tuning (no LoRA) of our 13B model on 2x A100 40GB with --per_device_train_batch_size 1 still fails:\n${OOM}`);
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });

  it('Chinese, batch unstated, finetuning_type full', async () => {
    const d = await diagnosePaste(`全参数微调，--finetuning_type full，4张3090 24G，训练时报错：\n${OOM}`);
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });

  it('not with adapters: a LoRA run at batch 1 gets no full-tune text', async () => {
    const d = await diagnosePaste(`LoRA fine-tuning with peft, per_device_train_batch_size 1, on a 24GB card:\n${OOM}`);
    expect(first(d)?.summary ?? '').not.toMatch(/^The paste runs a full fine-tune/);
  });

  it('not above a batch of 2: a full fine-tune at batch 32 keeps the batch lever', async () => {
    const d = await diagnosePaste(`Full fine-tuning, --per_device_train_batch_size 32 on an A100 80GB:\n${OOM}`);
    expect(first(d)?.summary ?? '').not.toMatch(/^The paste runs a full fine-tune/);
  });

  it('not where the budget sizes the static part as small: Qwen2-0.5B in full on a 24GB card', async () => {
    const d = await diagnosePaste(`Full fine-tuning Qwen/Qwen2-0.5B (no LoRA), batch size 1, on an RTX 3090 24GB:\n${OOM}`);
    expect(first(d)?.summary ?? '').not.toMatch(/^The paste runs a full fine-tune/);
  });

  it('not after steps ran at these settings (then the static part fit)', async () => {
    const d = await diagnosePaste(
      `Full fine-tuning without LoRA, per_device_train_batch_size 1\n{'loss': 1.2034, 'learning_rate': 1.9e-05, 'epoch': 1.42}\n${OOM}`,
    );
    expect(first(d)?.summary ?? '').not.toMatch(/^The paste runs a full fine-tune/);
  });
});

describe('one request of half the card or more: the input size leads', () => {
  it('real (tuned llm/341, fresh/709, input8/3203): 99%, 79% and 60% of the card in one request, no batch stated', async () => {
    for (const [g, n] of [
      ['llm', '341'],
      ['fresh', '709'],
      ['input8', '3203'],
    ]) {
      const d = await firstOfCase(g, n);
      expect(first(d)?.summary).toMatch(/^The failed request alone is/);
      expect(namedFirst(d, 'imgsz')).toBe(true);
    }
  });
  const req = (tried: number, total: number, allocated: number) =>
    `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried.toFixed(2)} GiB. GPU 0 has a total capacity of ${total.toFixed(2)} GiB of which ${(total - allocated - 0.3).toFixed(2)} GiB is free. Of the allocated memory ${allocated.toFixed(2)} GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.`;
  it('synthetic: 16 GiB of a 23.6 GiB card at batch 1 names the sequence / image size first, with the share', async () => {
    const d = await diagnosePaste(`--per_device_train_batch_size 1\n${req(16, 23.6, 5)}`);
    expect(first(d)?.summary).toContain('68%');
    expect(namedFirst(d, 'imgsz')).toBe(true);
  });
  it('synthetic, Chinese report and zh reply: the zh text gives the share and names the length first', async () => {
    const zh = await diagnoseOutput(['-'], { paste: `训练时报错，batch_size 没改过：\n${req(40, 79.3, 30)}`, locale: 'zh' });
    expect(zh).toContain('失败的这一次申请就占了卡的 40.00 GiB / 79.30 GiB, 50%');
    expect(zh.indexOf('序列 / 上下文长度')).toBeGreaterThan(0);
  });
  it('synthetic: a quarter of the card in one request is no such evidence', async () => {
    const d = await diagnosePaste(req(6, 23.6, 17));
    expect(first(d)?.summary ?? '').not.toMatch(/^The failed request alone is/);
  });
  it('synthetic: a stated batch of 16 keeps the batch lever', async () => {
    const d = await diagnosePaste(`python train.py --batch-size 16\n${req(16, 23.6, 5)}`);
    expect(first(d)?.summary ?? '').not.toMatch(/^The failed request alone is/);
  });
  it('synthetic: above twice the card the absurd-request rule answers', async () => {
    const d = await diagnosePaste(req(80, 23.6, 2));
    expect(first(d)?.summary ?? '').not.toMatch(/^The failed request alone is/);
  });
});

describe('synthetic: the batch-1 experiment names no lever the run already has', () => {
  const FIGURES =
    'RuntimeError: CUDA out of memory. Tried to allocate 256.00 MiB (GPU 0; 23.70 GiB total capacity; 21.90 GiB already allocated; 100.00 MiB free; 22.30 GiB reserved in total by PyTorch)';
  it('--fp16 at batch 1: sharding leads the static branch', async () => {
    const d = await diagnosePaste(`python train.py --batch_size 1 --fp16\n${FIGURES}`);
    expect(first(d)?.summary).toMatch(/^The batch is already 1/);
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });
  it('bf16 mixed precision in Chinese: the same order in the zh text', async () => {
    const d = await diagnosePaste(`batch_size=1，开了 --bf16 True，还是爆显存：\n${FIGURES}`);
    expect(namedFirst(d, 'offload_or_zero')).toBe(true);
  });
  it('LoRA at batch 1 (real: tuned llm/395, ms-swift LoRA at max_length 1024): the input leads, not an 8-bit optimizer or LoRA', async () => {
    const d = await firstOfCase('llm', '395');
    expect(first(d)?.summary).toContain('trains adapters');
    expect(namedFirst(d, 'imgsz')).toBe(true);
  });
  it('LoRA with peft at batch 1, synthetic: the sequence length leads', async () => {
    const d = await diagnosePaste(`LoRA fine-tuning with peft, get_peft_model(model, config), --per_device_train_batch_size 1\n${FIGURES}`);
    expect(first(d)?.summary).toContain('trains adapters');
    expect(namedFirst(d, 'imgsz')).toBe(true);
  });
  it('no half precision shown: bf16 stays the first static lever', async () => {
    const d = await diagnosePaste(`python train.py --batch_size 1\n${FIGURES}`);
    expect(first(d)?.summary).toMatch(/^The batch is already 1/);
    expect(namedFirst(d, 'amp')).toBe(true);
  });
});

describe('synthetic: a larger length that fails beside the length the run states', () => {
  it('reads "increasing max_length to 4096 runs out of memory" with max_length=1024 stated', () => {
    const text = 'python train.py --max_length=1024 --batch_size 1\nIncreasing max_length to 4096 runs out of memory.';
    expect(readSmallerInput(text)).toEqual({ smallerWorked: 'max_length 1024', largerFailed: 'max_length 4096' });
  });

  it('reads the Chinese "把 cutoff_len 调大到 4096 就爆显存" with cutoff_len: 2048 stated', () => {
    const text = 'cutoff_len: 2048\n把 cutoff_len 调大到 4096 就爆显存';
    expect(readSmallerInput(text).largerFailed).toBe('cutoff_len 4096');
  });

  it('nothing without a smaller stated length, and nothing where the line says it works', () => {
    expect(readSmallerInput('with larger max_length like 4096 it will OOM')).toEqual({});
    expect(readSmallerInput('max_length 512\nwith larger max_length 1024 it works fine, no OOM')).toEqual({});
  });

  it('in a paste: the length leads, not the batch-1 experiment', async () => {
    const d = await diagnosePaste(
      `LoRA on a 4-bit 30B base, --max_seq_length 512 --batch_size 1 uses 40GB.\nWith a longer max_seq_length of 2048 it goes OOM.\n${OOM}`,
    );
    expect(namedFirst(d, 'imgsz')).toBe(true);
  });
});

describe("the report's precision experiment: half precision fits, full precision runs out", () => {
  it('4424 (real): Accelerator(mixed_precision="fp16") runs, turning the flag off raises OOM: mixed precision leads', async () => {
    const d = await firstOfCase('order9', '4424');
    expect(first(d)?.summary).toContain('fits with half precision and runs out without it');
    expect(namedFirst(d, 'amp')).toBe(true);
  });
  it('synthetic: either order, English and Chinese', () => {
    expect(readHalfPrecisionWorked('Without mixed precision it runs out of memory, with --bf16 it works')).toBeDefined();
    expect(readHalfPrecisionWorked('开了 fp16 就能跑，关掉就爆显存')).toBeDefined();
    expect(readHalfPrecisionWorked('with fp16 it works without any problem, but in fp32 I get CUDA out of memory')).toBeDefined();
  });
  it('synthetic: not the reverse report, and not a failure in both', () => {
    expect(readHalfPrecisionWorked('With --fp16 I get OOM, but fp32 works fine')).toBeUndefined();
    expect(readHalfPrecisionWorked('fp16 OOM too, and without it out of memory as well')).toBeUndefined();
  });
  it('synthetic paste: the experiment beats the batch-unknown fallback', async () => {
    const d = await diagnosePaste(`With --bf16 training works, without it I get CUDA out of memory.\n${OOM}`);
    expect(namedFirst(d, 'amp')).toBe(true);
  });
});

describe("the report's checkpointing experiment: it fits with gradient checkpointing and runs out without it", () => {
  it('4425 (real): LoRA runs well with gradient_checkpointing, OOM when dropped (over two lines): checkpointing leads', async () => {
    const d = await firstOfCase('order9', '4425');
    expect(first(d)?.summary).toMatch(/^The report says the run fits with gradient checkpointing/);
    expect(namedFirst(d, 'checkpointing')).toBe(true);
  });
  it('synthetic: English in either order, Chinese, and over two lines', () => {
    expect(readSettingWorked('Without gradient checkpointing it runs out of memory, with it enabled it works', CHECKPOINTING)).toBeDefined();
    expect(readSettingWorked('开启梯度检查点就能跑，关掉就爆显存', CHECKPOINTING)).toBeDefined();
    expect(
      readSettingWorked('With --gradient_checkpointing training runs fine.\nWhen I disable gradient_checkpointing I get CUDA out of memory.', CHECKPOINTING),
    ).toBeDefined();
  });
  it('synthetic: not a saved checkpoint, not the reverse, not a failure in both', () => {
    expect(readSettingWorked('Saving the checkpoint works, but without the checkpoint the resume is OOM', CHECKPOINTING)).toBeUndefined();
    expect(readSettingWorked('With gradient_checkpointing I get OOM, but without it training works', CHECKPOINTING)).toBeUndefined();
    expect(readSettingWorked('gradient checkpointing on: OOM; gradient checkpointing off: OOM too', CHECKPOINTING)).toBeUndefined();
  });
  it('synthetic paste: the experiment leads over the batch-unknown fallback', async () => {
    const d = await diagnosePaste(`With gradient_checkpointing=True the step fits, but after removing gradient checkpointing it goes OOM.\n${OOM}`);
    expect(namedFirst(d, 'checkpointing')).toBe(true);
  });
});

describe('synthetic: a tool named by its own word only', () => {
  it('a directory ending in _vllm is no vLLM; vllm.entrypoints is', async () => {
    const path = await diagnosePaste(`python /home/me/train_vllm/sft.py --per_device_train_batch_size 8\n${OOM}`);
    expect(path?.facts.tool).not.toBe('vllm');
    const real = await diagnosePaste(`python -m vllm.entrypoints.openai.api_server --model m\n${OOM}`);
    expect(real?.facts.tool).toBe('vllm');
  });
});

describe('synthetic: a GPU count written against the card name still names the card (the budget needs its size)', () => {
  it('reads 8xA100 80GB, 4xA6000(48GB), 2x3090 24GB as the card, not the count', () => {
    expect(statedGpuMemoryMiB('on 8xA100 80GB')).toBe(80 * 1024);
    expect(statedGpuMemoryMiB('I tested it using 4xA6000(48GB) with batch size = 1')).toBe(48 * 1024);
    expect(statedGpuMemoryMiB('two cards, 2x3090 24GB')).toBe(24 * 1024);
  });
});

describe('an absurd request is weighed against the card the paste names when the message prints no total', () => {
  it('holdout/808 (real, tuned): 218.96 GiB on an "Nvidia gpu with 8gb": not a batch, the input or a shape', async () => {
    const d = await firstOfCase('holdout', '808');
    expect(d?.rule).toBe('cuda-oom-absurd-request');
    expect(first(d)?.summary).toMatch(/^A 218\.96 GiB request on a 8\.00 GiB GPU/);
  });
  it('synthetic: 100 GiB with an RTX 3090 24GB named is absurd; with no card named it is not (under the largest GPU made)', async () => {
    const named = await diagnosePaste('torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 GiB\nmy RTX 3090 24GB');
    expect(named?.rule).toBe('cuda-oom-absurd-request');
    expect(first(named)?.changes?.batch).toBeUndefined();
    const unnamed = await diagnosePaste('torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 GiB');
    expect(unnamed?.rule).not.toBe('cuda-oom-absurd-request');
  });
});
