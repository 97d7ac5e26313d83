// Issue 23, item 5: the error's type and its fixed message decide the route, never memory words beside it. A run that
// ends in tensors on two devices or a cuBLAS status that refuses the operation (NOT_SUPPORTED, ARCH_MISMATCH, not
// ALLOC_FAILED) gets that short non-memory diagnosis, also where a server or UI logs the message without its type
// (src/diagnose/final-error.ts finalOrLoggedError; knowledge/tensors-on-two-devices, knowledge/cublas-unsupported-operation).
// Real cases: blind10/6292 (a read split) and the tuned group confuse13/ (cases.json has each thread's URL); every other
// paste here is a SYNTHETIC variant written from the principle, not copied from a thread.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('the fixed non-memory message decides, whatever the prose says (real threads)', () => {
  it.each([
    ['blind10', '6292', 'tensors-on-two-devices'],
    ['confuse13', '7000', 'tensors-on-two-devices'],
    ['confuse13', '7007', 'tensors-on-two-devices'],
    ['confuse13', '7003', 'cublas-unsupported-operation'],
    ['confuse13', '7010', 'cublas-unsupported-operation'],
  ])('%s/%s -> %s', async (group, n, rule) => {
    const d = await firstOfCase(group, n);
    expect(d?.rule).toBe(rule);
    expect(d?.fixes[0].summary).not.toMatch(/\bbatch\b.{0,20}->|PYTORCH_(?:CUDA_)?ALLOC_CONF/);
  });
});

describe('synthetic variants: memory words in prose or side lines, a non-memory error', () => {
  it.each([
    // a logger's line carries the device message without its exception type; the prose blames memory
    [
      '显存不足，所以把模型放到 cuda:1\nERROR - generation failed: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!',
      'tensors-on-two-devices',
    ],
    [
      'Not enough GPU memory on GPU 0 so I moved the model to cuda:1.\n2025-01-02 10:11:12 [ERROR] worker: request failed: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!',
      'tensors-on-two-devices',
    ],
    [
      'I kept getting CUDA out of memory so I enabled offload.\nTraceback (most recent call last):\n  File "run.py", line 10, in <module>\n    out = model(x)\nRuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!',
      'tensors-on-two-devices',
    ],
    [
      'I ran out of GPU memory before, now this:\nRuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasLtMatmul( ltHandle, computeDesc.descriptor(), &alpha_val, mat1_ptr)`',
      'cublas-unsupported-operation',
    ],
    [
      'GPU memory is only 8 GB, I use bf16 to save memory.\nRuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedExFix(handle, opa, opb, m, n, k, a, CUDA_R_16BF, lda)`',
      'cublas-unsupported-operation',
    ],
    [
      '[INFO] total VRAM 16 GB, free 15.2 GB\nCUDA error at kernels.cu:88 code=15(CUBLAS_STATUS_NOT_SUPPORTED) "cublasGemmEx(handle, ...)"',
      'cublas-unsupported-operation',
    ],
  ])('%#', async (text, rule) => {
    expect((await diagnosePaste(text))?.rule).toBe(rule);
  });

  it.each([
    // shape, dtype and index errors with memory prose: no memory diagnosis (the engine abstains)
    'to avoid OOM I reduced max_length to 256 and now:\nTraceback (most recent call last):\n  File "x.py", line 3, in <module>\nRuntimeError: The size of tensor a (512) must match the size of tensor b (256) at non-singleton dimension 1',
    'I cast to half to save GPU memory\nTraceback (most recent call last):\n  File "x.py", line 3, in <module>\nRuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same',
    'memory usage looks fine, 10/24 GB\nTraceback (most recent call last):\n  File "x.py", line 3, in <module>\n    e = emb(ids)\nIndexError: index out of range in self',
  ])('no memory diagnosis: %#', async (text) => {
    const d = await diagnosePaste(text);
    expect(['cuda_oom', 'fragmentation', 'host_oom_killed', 'growing_memory_leak']).not.toContain(d?.category);
  });
});

describe('near misses: a memory failure stays a memory diagnosis (synthetic)', () => {
  it("cuBLAS's allocation failure is memory", async () => {
    const d = await diagnosePaste(
      'Traceback (most recent call last):\n  File "t.py", line 5, in <module>\n    y = lin(x)\nRuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`',
    );
    expect(d?.category).toBe('cudnn_cublas_alloc');
  });
  it('an OOM after a device mismatch the user already fixed is the OOM', async () => {
    const d = await diagnosePaste(
      'First I had "Expected all tensors to be on the same device", fixed it, and now:\nTraceback (most recent call last):\n  File "train.py", line 120, in <module>\n    outputs = model(**batch)\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; 20.91 GiB already allocated; 1.12 GiB free; 21.60 GiB reserved in total by PyTorch)',
    );
    expect(d?.category).toBe('cuda_oom');
  });
  it('a logged OOM message with no device message stays an OOM', async () => {
    const d = await diagnosePaste(
      '2025-01-02 10:11:12 [ERROR] worker: request failed: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; 21.91 GiB already allocated; 120.00 MiB free; 22.60 GiB reserved in total by PyTorch)',
    );
    expect(d?.category).toBe('cuda_oom');
  });
  it('a logged OOM after a logged device mismatch is the later error: the OOM', async () => {
    const d = await diagnosePaste(
      '[WARN] retry: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!\n[ERROR] worker: CUDA out of memory. Tried to allocate 4.00 GiB (GPU 0; 23.65 GiB total capacity; 21.91 GiB already allocated; 120.00 MiB free; 22.60 GiB reserved in total by PyTorch)',
    );
    expect(d?.category).toBe('cuda_oom');
  });
  it('an OOM exception before a logged device mismatch is the first failure', async () => {
    const d = await diagnosePaste(
      'Traceback (most recent call last):\n  File "a.py", line 2, in <module>\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB (GPU 0; 23.65 GiB total capacity; 20.91 GiB already allocated; 1.12 GiB free; 21.60 GiB reserved in total by PyTorch)\nthen the fallback path logged:\n[ERROR] Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!',
    );
    expect(d?.category).toBe('cuda_oom');
  });
});
