// Another holder of the card, or a GPU the run cannot have, told by each tool's FIXED message (issue 23 item 5): CUDA's
// MPS errors 805-809 (cuGetErrorString), vLLM's start-up profiling assertion (determine_available_memory) and
// SGLang's tensor-parallel balance check (model_runner). Every paste here is SYNTHETIC, written from the format strings
// with other figures, ranks and wrappers; the near misses are other messages of the same tools.
import { describe, expect, it } from 'vitest';
import { diagnosePaste } from './corpus-case.js';

const cudaError = (text: string, prefix = '') =>
  [
    'Traceback (most recent call last):',
    '  File "run.py", line 9, in <module>',
    '    net = net.to("cuda")',
    `${prefix}RuntimeError: CUDA error: ${text}`,
    `${prefix}CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.`,
  ].join('\n');

describe('CUDA MPS refused the context: the daemon, not memory or the batch', () => {
  it.each([
    cudaError('MPS client failed to connect to the MPS control daemon or the MPS server'),
    cudaError('MPS server is not ready to accept new MPS client requests', '[rank3]: '),
    cudaError('the hardware resources required to create MPS client have been exhausted'),
    'jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA error: Failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_MPS_CONNECTION_FAILED: MPS client failed to connect to the MPS control daemon or the MPS server',
    'F0101 10:00:00.000000 12 cuda_driver.cc:42] Check failed: cudaErrorMpsMaxClientsReached',
  ])('%#: cuda-mps-unavailable, the daemon first', async (paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('cuda-mps-unavailable');
    expect(d?.category).toBe('driver_or_smi');
    expect(d?.fixes[0].summary).toMatch(/nvidia-cuda-mps-control/);
    expect(d?.fixes[0].summary).not.toMatch(/halve|smaller batch/i);
  });
  it("near miss: Apple's MPS backend running out of memory is not CUDA's MPS", async () => {
    const d = await diagnosePaste(
      'RuntimeError: MPS backend out of memory (MPS allocated: 9.01 GB, other allocations: 320.00 MB, max allowed: 9.07 GB). Tried to allocate 64.00 MB on private pool.',
    );
    expect(d?.rule).not.toBe('cuda-mps-unavailable');
  });
});

describe("vLLM's profiling saw free memory rise: another process released memory at start-up", () => {
  const lines = (initial: string, current: string, tail: string) =>
    `AssertionError: Error in memory profiling. Initial free memory ${initial}, current free memory ${current}. ${tail}`;
  it.each([
    lines('20.1 GiB', '22.3 GiB', 'This happens when the GPU memory was not properly cleaned up before initializing the vLLM instance.'),
    `(EngineCore_DP0 pid=811) ${lines('58.23 GiB', '59.34 GiB', 'This happens when other processes sharing the same container release GPU memory while vLLM is profiling during initialization.')}\nRuntimeError: Engine core initialization failed. See root cause above.`,
    `(VllmWorkerProcess pid=77) ${lines('39909924864', '47541829632', 'This happens when the GPU memory was not properly cleaned up before initializing the vLLM instance.')}`,
  ])('%#: vllm-memory-profiling-changed, the other holder first', async (paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('vllm-memory-profiling-changed');
    expect(d?.fixes[0].summary).toMatch(/^Another process/);
    expect(d?.fixes[0].summary).toMatch(/CUDA_VISIBLE_DEVICES/);
    expect(d?.fixes[0].summary).not.toMatch(/--gpu-memory-utilization|max-model-len|batch/);
  });
  it("near miss: vLLM's profiling timing line with a KV-cache shortage is the KV cache's", async () => {
    const d = await diagnosePaste(
      'INFO 06-01 10:00:00 [gpu_worker.py:240] Memory profiling takes 3.10 seconds\nValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.',
    );
    expect(d?.rule).not.toBe('vllm-memory-profiling-changed');
  });
});

describe("SGLang's TP balance check: one of the server's GPUs is partly held elsewhere", () => {
  it.each([
    'ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes.',
    '[2025-05-01 08:00:00 TP2] Scheduler hit an exception: Traceback (most recent call last):\nRuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. min_per_gpu_memory=16.28, local_gpu_memory=46.81, local_gpu_memory * 0.9=42.13',
    'RuntimeError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. pre_model_load_memory=13.53, local_gpu_memory=23.09, local_gpu_memory * 0.9=20.78',
  ])('%#: sglang-tp-memory-unbalanced, free or pick the GPUs first', async (paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('sglang-tp-memory-unbalanced');
    expect(d?.fixes[0].summary).toMatch(/another process holds/);
    expect(d?.fixes[0].summary).not.toMatch(/mem-fraction-static|batch/);
  });
  it("near miss: SGLang's own pool too small is the pool's", async () => {
    const d = await diagnosePaste('RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.');
    expect(d?.rule).not.toBe('sglang-tp-memory-unbalanced');
  });
});

describe('the same forms as titles and wrapped pastes show them (synthetic)', () => {
  it('a title without the final period', async () => {
    expect((await diagnosePaste('[Bug] ValueError: The memory capacity is unbalanced\nserver_args=ServerArgs(tp_size=4)'))?.rule).toBe(
      'sglang-tp-memory-unbalanced',
    );
  });
  it("vLLM's assertion wrapped after the first figure", async () => {
    const d = await diagnosePaste(
      'AssertionError: Error in memory profiling. Initial free memory 41.02 GiB,\ncurrent free memory 44.87 GiB. This happens when other processes sharing the',
    );
    expect(d?.rule).toBe('vllm-memory-profiling-changed');
  });
});
