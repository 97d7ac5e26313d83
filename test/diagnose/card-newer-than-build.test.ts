// Issue 23 item 4 (one environment is assumed): a card newer than the CUDA its framework was built for. Every CUDA
// release builds code only for the architectures known when it shipped, so a framework built for an older CUDA fails
// its first cuBLAS/cuDNN call on a newer card whatever the batch: the card's compute capability (its name or the
// capability the framework printed) against every CUDA the paste names decides (levers/card-arch.ts,
// knowledge/gpu-archs.json). Real logs: blind12 7178, 7179, 7181, 7190, blind11 6676 (read splits) and arch14/7360; the
// rest are synthetic, written from the principle (said in each title), with near misses where it must not fire.
import { describe, expect, it } from 'vitest';
import { diagnoseOutput, diagnosePaste, firstOfCase } from './corpus-case.js';
import { LogText } from '../../src/diagnose/normalize.js';
import { readBuildCuda, readCardArch } from '../../src/diagnose/levers/card-arch.js';

const GEMM = 'E tensorflow/stream_executor/cuda/cuda_blas.cc:428] failed to run cuBLAS routine: CUBLAS_STATUS_EXECUTION_FAILED';
const TORCH_GEMM =
  'RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`';

describe('a card newer than every CUDA the paste names for the build: no code for it, not memory', () => {
  it.each([
    ['blind12', '7178', /RTX 4090 \(sm_89, Ada Lovelace\) needs CUDA 11\.8 or newer.*CUDA 10\.0/],
    ['blind12', '7179', /RTX 3080 \(sm_86.*PyTorch 1\.3 \(CUDA ≤ 10\.1\)/],
    ['blind12', '7181', /RTX 2080 \(sm_75, Turing\) needs CUDA 10\.0 or newer.*CUDA 9\.0/],
    ['blind12', '7190', /RTX3070.*TensorFlow 1\.13 \(CUDA 10\.0\)/],
    ['blind11', '6676', /RTX4090.*CUDA 11\.0/],
    ['arch14', '7360', /3080ti.*CUDA 10\.1/],
  ])('real %s/%s', async (group, n, finding) => {
    const d = await firstOfCase(group, n);
    expect(d?.rule).toBe('card-newer-than-build');
    expect(d?.category).toBe('driver_or_smi');
    expect(d?.fixes[0].summary).toMatch(finding);
    expect(d?.fixes[0].summary).toMatch(/^Not memory: .*Upgrade to a framework build for CUDA \d/);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });

  it.each([
    [
      'TF device line (capability printed, no name)',
      `name: GeForce Graphics major: 8 minor: 6 memoryClockRate(GHz): 1.7\ntensorflow-gpu==1.15.0\n${GEMM}`,
      /the GPU \(sm_86, Ampere\)/,
    ],
    ['PyTorch collect_env', `CUDA used to build PyTorch: 10.2\nGPU 0: NVIDIA GeForce RTX 3090\n${TORCH_GEMM}`, /RTX 3090.*CUDA 10\.2/],
    ['a +cu wheel', `torch 1.6.0+cu102 on an NVIDIA A100\n${TORCH_GEMM}`, /A100.*CUDA 11\.0 or newer/],
    [
      'Blackwell on a cu124 wheel',
      `torch 2.5.1+cu124, RTX 5080\nRuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling \`cublasCreate(handle)\``,
      /RTX 5080.*CUDA 12\.8 or newer/,
    ],
    ['Chinese report', `4090显卡，cuda 10.0，tensorflow-gpu 1.15 报错：\n${GEMM}`, /4090显卡.*CUDA 11\.8/],
    [
      'nvcc release',
      `Cuda compilation tools, release 9.0, V9.0.176\nTesla T4\nCheck failed: status == CUBLAS_STATUS_SUCCESS (13 vs. 0)  CUBLAS_STATUS_EXECUTION_FAILED`,
      /T4.*CUDA 9\.0/,
    ],
  ])('synthetic: %s', async (_name, text, finding) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('card-newer-than-build');
    expect(d?.fixes[0].summary).toMatch(finding);
  });

  it.each([
    ['the build supports the card (TF 2.5 / CUDA 11.2 on a 3090)', `tensorflow 2.5.0, CUDA 11.2, RTX 3090\n${GEMM}`],
    ['any named CUDA supports it (toolkit 10.0 beside a cu118 wheel)', `cudatoolkit 10.0, torch 2.0.1+cu118, RTX 4090\n${TORCH_GEMM}`],
    [
      "the driver's CUDA is not the build's (nvidia-smi header only)",
      `| NVIDIA-SMI 470.57  Driver Version: 470.57  CUDA Version: 11.4 |\nRTX 3090\n${TORCH_GEMM}`,
    ],
    [
      'a PyTorch index URL names the build (cu118) beside an old toolkit',
      `CUDA 10.1 installed; pip install torch --index-url https://download.pytorch.org/whl/cu118\nRTX 4070\n${TORCH_GEMM}`,
    ],
    ['no card named', `cudatoolkit 9.0, tensorflow 1.14.0\n${GEMM}`],
    ['no version named', `RTX 3090, training takes 10 GB\n${GEMM}`],
    ['an older card on an old build (GTX 1080 Ti, CUDA 9.0)', `GTX 1080 Ti, CUDA 9.0, tensorflow-gpu 1.12\n${GEMM}`],
  ])('synthetic near miss, must not fire: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).not.toBe('card-newer-than-build');
  });

  it('synthetic: a memory failure with a card and an old CUDA stays memory (no library failure line)', async () => {
    const d = await diagnosePaste(
      'RTX 3090, CUDA 10.2\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.70 GiB total capacity; 20.10 GiB already allocated; 1.20 GiB free; 21.50 GiB reserved in total by PyTorch)',
    );
    expect(d?.category).toBe('cuda_oom');
  });

  it('synthetic: the Chinese reply places the same figures in its own sentence', async () => {
    const out = await diagnoseOutput(['-'], { paste: `RTX 4090，cuda 10.0，tensorflow-gpu 1.15\n${GEMM}`, locale: 'zh' });
    expect(out).toMatch(/不是显存问题：RTX 4090 \(sm_89, Ada Lovelace\) 需要 CUDA 11\.8 或更新版本/);
  });

  it('reads "cuda:0" as a device, not CUDA 0, and lists after a version ("10.0/10.1")', () => {
    expect(readBuildCuda(new LogText("x = x.to('cuda:0')\n"))).toBeUndefined();
    expect(readBuildCuda(new LogText('cudatoolkit=10.0/10.1 and tensorflow-gpu=1.13.1/1.14.0\n'))?.newest).toBe(1001);
    expect(readCardArch(new LogText('GeForce RTX 2080 Ti and a GTX 1080\n'))?.cc).toBe(705);
  });
});
