// Principle (issue 23, growth against capacity; session 39 g1): a server's run is counted in requests. Memory told to
// climb request after request ("gradually increases ... after subsequent requests", "sending requests continuously",
// "with each request", "每次请求后显存都会增加") and then a CUDA OOM on a later request is the climb ending, not one
// request too big: the climb comes first, the OOM after it. A climb told with no measure of the run, or an OOM whose
// single request is a quarter of the card, keeps the OOM's own answer first (growth-oom.ts toldClimbFirst).
// The real cases are from the read split blind6 and the tuned group growth13; the others are synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnoseAll, firstOfCase } from './corpus-case.js';
import { OVER_REQUESTS } from '../../src/diagnose/told-vocabulary.js';

const OOM = (tried: string, total: string, free: string, self: string) =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried}. GPU 0 has a total capacity of ${total} of which ${free} is free. Including non-PyTorch memory, this process has ${self} memory in use. Of the allocated memory 20.10 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.`;

describe('a climb told over requests, then an OOM: the climb first', () => {
  it('real: vLLM-Omni "when sending requests continuously ... gradually increases, leading to OOM errors after subsequent requests" (blind6 3811)', async () => {
    const d = await firstOfCase('blind6', '3811');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).not.toMatch(/^Reduce the batch/);
  });

  it('real: SGLang on 4x 4090 "During the request process, the VRAM usage on GPU 0 continuously increases" (growth13 6802)', async () => {
    const d = await firstOfCase('growth13', '6802');
    expect(d?.category).toBe('growing_memory_leak');
  });

  // Synthetic: a server paste, the climb told against requests in several wordings, the same OOM message.
  it.each([
    'My FastAPI server runs the model. GPU memory keeps increasing with each request, and after a few hundred calls:',
    'When sending requests continuously, the GPU memory slowly grows until it fails after several requests:',
    'The VRAM usage gradually increases after subsequent requests are sent, then the server errors with:',
    '服务部署后，每次请求后显存都在不断增加，最后报错：',
    'During the request process, the VRAM usage on GPU 0 continuously increases and eventually leads to an OOM:',
  ])('%j (synthetic)', async (told) => {
    const ds = await diagnoseAll('-', `${told}\n${OOM('512.00 MiB', '23.55 GiB', '120.00 MiB', '23.40 GiB')}\n`);
    expect(ds[0].category).toBe('growing_memory_leak');
    expect(ds.some((d) => d.category === 'cuda_oom')).toBe(true);
  });
});

describe('no climb over requests: the OOM answers first', () => {
  it.each([
    // A climb told with no measure of the run.
    'The GPU memory keeps increasing, then:',
    // A request of most of the card is capacity, whatever the words say of a climb.
    'GPU memory keeps increasing with each request, and then:',
  ])('%j (synthetic)', async (told) => {
    const big = /each request/.test(told);
    const ds = await diagnoseAll('-', `${told}\n${OOM(big ? '12.00 GiB' : '512.00 MiB', '23.55 GiB', '120.00 MiB', '11.40 GiB')}\n`);
    expect(ds[0].category).toBe('cuda_oom');
  });

  it('OVER_REQUESTS reads a count of requests, not a batch of prompts', () => {
    expect(OVER_REQUESTS.test('after several requests the memory is full')).toBe(true);
    expect(OVER_REQUESTS.test('the memory grows per request')).toBe(true);
    expect(OVER_REQUESTS.test('连续请求之后显存不释放')).toBe(true);
    expect(OVER_REQUESTS.test('while serving requests the VRAM keeps rising')).toBe(true);
    expect(OVER_REQUESTS.test('I send a request with 64 prompts')).toBe(false);
    expect(OVER_REQUESTS.test('the request is large')).toBe(false);
  });
});
