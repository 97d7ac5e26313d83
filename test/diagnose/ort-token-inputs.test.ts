// ONNX Runtime's arena message names no input; a session the paste feeds with a tokenizer's fixed input names
// (input_ids / attention_mask / token_type_ids) runs token sequences, so its levers are the sequences per run (the
// batch) and their length, not an image size (levers/token-inputs.ts). Real thread (blind8 read split) beside synthetic
// variants (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const ORT =
  "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running MatMul node. Name:'MatMul_40' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:342 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool) Failed to allocate memory for requested buffer of size 4294967296";

describe('real thread (blind8)', () => {
  it('5658: a classifier exported with input_ids / attention_mask: feed chunks of sequences first', async () => {
    const d = await firstOfCase('blind8', '5658');
    expect(first(d)).toMatch(/token sequences[\s\S]*chunks of sequences \(the batch/);
    expect(first(d)).not.toMatch(/image size/);
  });
});

describe('synthetic', () => {
  it.each([['sess.run(None, {"input_ids": ids, "attention_mask": mask})'], ['inputs = {"input_ids": ..., "token_type_ids": ...}']])(
    'token inputs (%s): sequences per run and their length',
    async (feed) => {
      const d = await diagnosePaste([feed, ORT, 'CUDAExecutionProvider'].join('\n'));
      expect(first(d)).toMatch(/token sequences/);
    },
  );
  it('pixel_values beside them (a vision-language model): the general advice with the image size', async () => {
    const d = await diagnosePaste(['inputs = {"input_ids": ids, "pixel_values": px}', ORT, 'CUDAExecutionProvider'].join('\n'));
    expect(first(d)).not.toMatch(/token sequences/);
    expect(first(d)).toMatch(/image size/);
  });
  it('no input named: the general advice', async () => {
    expect(first(await diagnosePaste([ORT, 'CUDAExecutionProvider'].join('\n')))).toMatch(
      /^ONNX Runtime's CUDA arena could not get 4\.00 GiB more on the GPU\. Lower what one run feeds/,
    );
  });
});
