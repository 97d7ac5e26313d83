// MXNet's operator kernels check CUDA with mshadow's MSHADOW_CUDA_POST_KERNEL_CHECK: CHECK_EQ(err, cudaSuccess) << "Name: "
// << #x << " ErrStr:" << cudaGetErrorString(err), so an allocation failing inside a kernel reads "Check failed: err ==
// cudaSuccess (2 vs. 0) Name: MapPlanKernel ErrStr:out of memory": the MXNet rule answers it, not the words-only route.
// Caffe's own CHECK ("error == cudaSuccess (2 vs. 0)  out of memory") stays Caffe's. Real thread (stacks11, tuned) beside
// synthetic variants written from the format (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('mshadow kernel check', () => {
  it('stacks11/5908: MapPlanKernel out of memory is MXNet', async () => {
    expect((await firstOfCase('stacks11', '5908'))?.rule).toBe('mxnet-cuda-oom');
  });
  it.each(['MapPlanKernel', 'MapRedKeepLowestKernel', 'SoftmaxKernel'])('synthetic: %s', async (kernel) => {
    const d = await diagnosePaste(
      `[10:02:11] src/operator/tensor/./../mshadow_op.h:42: Check failed: err == cudaSuccess (2 vs. 0) Name: ${kernel} ErrStr:out of memory`,
    );
    expect(d?.rule).toBe('mxnet-cuda-oom');
  });
  it("synthetic: another CUDA error in the same check (an illegal address) is not an OOM of MXNet's", async () => {
    const d = await diagnosePaste('Check failed: err == cudaSuccess (77 vs. 0) Name: MapPlanKernel ErrStr:an illegal memory access was encountered');
    expect(d?.rule).not.toBe('mxnet-cuda-oom');
  });
  it("synthetic: Caffe's own check stays Caffe's", async () => {
    const d = await diagnosePaste('F0410 19:30:37.227159     8 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory');
    expect(d?.rule).not.toBe('mxnet-cuda-oom');
  });
});
