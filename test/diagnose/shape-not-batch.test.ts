// A failed tensor's shape or size says what the lever is before the batch does (issue 23 item 2; levers/stack-levers.ts):
// a middle axis of 100,000+ in TensorFlow's failed tensor is a length read without a bound (time steps, tokens, points),
// so its leading dimension is not read as the batch and the length comes first; ONNX Runtime's arena asking for more
// than any accelerator has is a shape that overflowed, not capacity. Real examples are cases of the read split blind6
// (real public threads, its cases.json); the others are synthetic variants written from TensorFlow's and ONNX Runtime's
// fixed message text, and say so in their names.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;
const firstFix = async (paste: string) => (await diagnosePaste(paste))?.fixes[0];
const tf = (shape: string) =>
  `2018-06-08 17:26:00.908130: W tensorflow/core/framework/op_kernel.cc:1202] OP_REQUIRES failed at tile_ops.cc:123 : Resource exhausted: OOM when allocating tensor with shape[${shape}] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[${shape}] and type float`;

describe("a length axis of 100,000+ in TensorFlow's failed tensor comes before its leading dimension", () => {
  it(
    'real: blind6/3887 (shape[16,1,892800,8,4,2,2] in a speech model: the time axis, not batch 16)',
    async () => {
      const d = await firstOfCase('blind6', '3887');
      expect(d!.fixes[0].changes.batch).toBeUndefined();
      expect(d!.fixes[0].summary).toMatch(/^One axis of the tensor TensorFlow could not allocate is 892800 long .*Cap the sequence length/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: other ranks and lengths; a control where the 250,002-wide axis is last (logits) keeps the batch',
    async () => {
      for (const [shape, axis] of [
        ['8,250000,64', '250000'],
        ['4,3,1048576,16', '1048576'],
      ]) {
        const fix = await firstFix(tf(shape));
        expect(fix?.changes.batch).toBeUndefined();
        expect(fix?.summary).toMatch(new RegExp(`^One axis of the tensor TensorFlow could not allocate is ${axis} long`));
      }
      const logits = await firstFix(tf('16,512,250002'));
      expect(logits?.summary).not.toMatch(/^One axis of the tensor/);
      expect(logits?.changes.batch).toBe(8);
    },
    TEST_TIMEOUT,
  );
});

describe("ONNX Runtime's arena asking for more than any GPU has is not capacity", () => {
  const ort = (bytes: string) =>
    `onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running MatMul node. Name:'/encoder/MatMul' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size ${bytes}\nExecution Provider: CUDA`;

  it(
    'real: blind6/3854 (a 4.6e18-byte request on a T4)',
    async () => {
      const d = await firstOfCase('blind6', '3854');
      expect(d!.fixes[0].summary).toMatch(/^Not capacity: ONNX Runtime asked its arena for 4\.6e\+18 bytes/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: another overflowed size; a control of 2 GiB keeps the arena advice with its size',
    async () => {
      expect((await firstFix(ort('18446744073709551360')))?.summary).toMatch(/^Not capacity: ONNX Runtime asked its arena for 1\.8e\+19 bytes/);
      expect((await firstFix(ort('2147483648')))?.summary).toMatch(/^ONNX Runtime's CUDA arena could not get 2\.00 GiB more/);
    },
    TEST_TIMEOUT,
  );
});
