// More of the ways real reports state a failure, and who holds the memory decided from them (issue 12 §1,
// §6): the fresh/ split of the corpus, tuned from stop 19 (its misses were read), through the CLI.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseFile, firstOfCase } from './corpus-case.js';

interface D {
  rule: string;
  category: string;
  facts: Record<string, unknown>;
  fixes: { summary: string; changes: Record<string, unknown> }[];
}
async function first(n: string): Promise<D> {
  return (await firstOfCase('fresh', n)) as D;
}

describe('serving tools and start-up checks', () => {
  it("text-generation-inference's warmup, 'Not enough memory to handle 4096 prefill tokens' (fresh/731): its own --max-batch-prefill-tokens first", async () => {
    const d = await first('731');
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.tool).toBe('tgi');
    // tgi-prefill-warmup reads the token count from TGI's own message and halves it.
    expect(d.fixes[0].summary).toMatch(/lower --max-batch-prefill-tokens \(e\.g\. 2048\)/);
  });

  it("vLLM's 'Free memory on device (59.32/79.15 GiB) on startup' (fresh/774): about 19.8 GiB held by other processes before it began", async () => {
    const d = await first('774');
    expect(d.facts).toMatchObject({ holder: 'other_processes', startupFreeMiB: 60743.68 });
    expect(d.facts.holderWhy).toMatch(/only 59\.32 GiB of 79\.15 GiB was free when the process started: about 19\.83 GiB is held by other processes/);
    expect(d.fixes[0].summary).toMatch(/CUDA_VISIBLE_DEVICES/);
  });
});

describe('messages of other stacks, read for their numbers', () => {
  it("JAX's 'Out of memory allocating 20029400304 bytes' (fresh/743): the request is read", async () => {
    const d = await first('743');
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.triedAllocMiB).toBeCloseTo(19101.52, 1);
  });

  it("PaddlePaddle 1.x 'Cannot malloc 49.0002 MB GPU memory' (fresh/759): a CUDA OOM with its request", async () => {
    const d = await first('759');
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.triedAllocMiB).toBeCloseTo(49, 1);
  });

  it("'NCCL watchdog thread terminated with exception' (fresh/763) is the collective-timeout family", async () => {
    expect((await first('763')).rule).toBe('nccl-collective-timeout');
  });

  it("'insufficient shared memery (shm)', misspelt (fresh/765), is shared memory", async () => {
    const d = await first('765');
    expect(d.category).toBe('shm_exhausted');
    expect(d.fixes[0].summary).toMatch(/shm/);
  });

  it("the kernel's 'NVIDIA probe routine was not called' (nouveau owns the cards, fresh/728): the driver, with the blacklist step", async () => {
    const d = await first('728');
    expect(d.category).toBe('driver_or_smi');
    expect(JSON.stringify(d.fixes)).toMatch(/blacklist nouveau/);
  });
});

describe('who holds the memory, from what the report says', () => {
  it("'模型加载Killed了' (killed while the model loaded, fresh/713): the weights in host RAM first, not DataLoader workers", async () => {
    const d = await first('713');
    expect(d.category).toBe('host_oom_killed');
    expect(d.fixes[0].summary).toMatch(/while the model was loading.*low_cpu_mem_usage/);
  });

  it("'CUDA error: out of memory' while build_model moves the model to the GPU (fresh/771): the card was already full, move or free it", async () => {
    const d = await first('771');
    expect(d.facts).toMatchObject({ holder: 'other_processes', runtimeOom: true, oomPhase: 'load' });
    expect(d.fixes[0].summary).toMatch(/CUDA_VISIBLE_DEVICES/);
    expect(d.fixes.some((f) => typeof f.changes.batch === 'number')).toBe(false);
  });

  it("'A100 80G' in the report sizes the card (fresh/725): full fine-tuning of 13B with Adam does not fit, ZeRO/offload first", async () => {
    const d = await first('725');
    expect(d.facts).toMatchObject({ statedGpuMemoryMiB: 81920, paramsB: 13, holder: 'optimizer_state' });
    expect(d.fixes[0].summary).toMatch(/offload/);
  });
});

describe('growth told in words', () => {
  it("'the memory kept growing when training, and ran out of memory after some time' (fresh/733): growth, .item() first", async () => {
    const d = await first('733');
    expect(d.category).toBe('growing_memory_leak');
    expect(d.fixes[0].summary).toMatch(/loss\.item\(\)/);
  });

  it("memory told at two iterations in one sentence ('At iter 99 ... 3200mb ..., at iter 219 it jumps to 7000mb', fixtures/eval-extra/035): growth outranks the OOM at its end", async () => {
    const d = (await diagnoseFile(resolve(import.meta.dirname, '../fixtures/eval-extra/035-growing_memory_leak.log')))!;
    expect(d.category).toBe('growing_memory_leak');
  });
});
