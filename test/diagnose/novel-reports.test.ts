// Wordings from the novel/ split of the corpus (tuned from the end of stop 20: its misses were read),
// through the CLI.
import { describe, expect, it } from 'vitest';
import { firstOfCase } from './corpus-case.js';

async function category(n: string): Promise<string> {
  return (await firstOfCase('novel', n))?.category ?? 'none';
}

describe('the failure told in words the rules did not know', () => {
  it.each([
    ['1208', 'host_oom_killed', '只有 packing 的时候会内存 OOM (内存 is host RAM)'],
    ['1213', 'growing_memory_leak', '"the memory it needs increased ,and stopped when it report ... out of memory"'],
    ['1219', 'host_oom_killed', '"killed" will appear in second epoch'],
    ['1231', 'cuda_oom', '用qlora 4bit 微调llama3 70b oom (a Chinese line ending in OOM)'],
    ['1232', 'cuda_oom', '"it gives me an outof memory error"'],
    ['1236', 'shm_exhausted', '"[Errno 28] No space left on device.  joblib will operate in serial mode"'],
    ['1254', 'cuda_oom', '"i am getting resource exhausted error" (TensorFlow)'],
    ['1255', 'cuda_oom', 'an issue titled ResourceExhaustedError (Paddle)'],
    ['1267', 'cudnn_cublas_alloc', '"CUBLAS initialization failed"'],
  ])('novel/%s -> %s: %s', async (n, want) => {
    expect(await category(n)).toBe(want);
  });
});

const firstOf = async (group: string, n: string) => (await firstOfCase(group, n))!;

describe('a process the driver cannot see ("this process has 0 bytes memory in use")', () => {
  it('novel/1200 (rank 15 in a container: 48.15 GiB allocated, 3.49 GiB idle against a 2.63 GiB request): the idle cache, not "24.86 GiB held outside"', async () => {
    const d = await firstOf('novel', '1200');
    expect(d.facts.holder).toBe('allocator_cache');
    expect(d.fixes[0].env?.PYTORCH_CUDA_ALLOC_CONF).toBe('expandable_segments:True');
  });
  it('llm/407 (10.47 GiB allocated, 12.81 MiB free of 79.10 GiB, every process at 0 bytes): most of the card outside is still other processes', async () => {
    expect((await firstOf('llm', '407')).facts.holder).toBe('other_processes');
  });
});

describe("CTranslate2's own out-of-memory (faster-whisper, WhisperX)", () => {
  it.each([
    ['novel', '1206', '"CUDA failed with error out of memory" with "-bs=10 or -bo=1 don\'t work"'],
    ['blind', '1056', '--model=large-v2 in Standalone Faster-Whisper'],
    ['fresh', '724', 'the faster_whisper engine of openai-whisper-asr-webservice'],
  ])('%s/%s (%s): a smaller compute type or model, not the batch', async (group, n) => {
    const d = await firstOf(group, n);
    expect(d.fixes[0].summary).toMatch(/^CTranslate2 holds the model in its compute type on the GPU: use a smaller compute type/);
  });
});
