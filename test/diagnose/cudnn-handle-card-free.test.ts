// Issue 23, the numbers of the error decide: XLA's and TensorFlow's stream executor (cuda_dnn.cc CudnnSupport::Init)
// print "Memory usage: N bytes free, M bytes total." right after "Could not create cudnn handle: CUDNN_STATUS_...".
// With most of the card free the handle did not fail for memory: a cuDNN / driver / build mismatch, no memory setting.
// Real log: blind9/5783 (a read split, JAX); the rest synthetic, written from the format in cuda_dnn.cc. In process.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const handle = (free: number, total: number, prefix = 'E0515 10:03:24.130426   19611 cuda_dnn.cc:534] ') =>
  `${prefix}Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n${prefix.replace('534', '538')}Memory usage: ${free} bytes free, ${total} bytes total.`;

describe('a cuDNN handle that fails with most of the card free is a version mismatch, not memory', () => {
  it('real blind9/5783: JAX, 7.97 of 8.2 GB free', async () => {
    const d = await firstOfCase('blind9', '5783');
    expect(d?.rule).toBe('cudnn-handle-card-free');
    expect(d?.category).toBe('driver_or_smi');
    expect(d?.fixes[0].summary).toMatch(/7\.43 GiB of 7\.64 GiB free: not memory/);
  });

  // synthetic: XLA's glog prefix, TF 1.x/2.x's timestamped prefix, another status
  it.each([
    ['XLA glog', handle(40_000_000_000, 42_949_672_960)],
    ['TF 2.x', handle(10_736_893_952, 11_554_717_696, '2021-03-02 11:20:01.512345: E tensorflow/stream_executor/cuda/cuda_dnn.cc:534] ')],
    ['NOT_INITIALIZED', handle(6_000_000_000, 8_000_000_000).replace('INTERNAL_ERROR', 'NOT_INITIALIZED')],
  ])('synthetic: %s', async (_n, text) => {
    const d = await diagnosePaste(`${text}\njaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed.`);
    expect(d?.category).toBe('driver_or_smi');
    expect(d?.fixes[0].summary).not.toMatch(/allow_growth|batch\b(?! applies)/i);
  });

  it('synthetic: with the card nearly full the memory reading stays (TensorFlow reserved it)', async () => {
    const d = await diagnosePaste(
      `${handle(262_144_000, 8_513_978_368, '2019-01-10 09:12:44.101234: E tensorflow/stream_executor/cuda/cuda_dnn.cc:534] ')}\ntensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize`,
    );
    expect(d?.rule).toBe('tensorflow-cudnn-init-memory');
  });
});
