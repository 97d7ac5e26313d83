// Out-of-memory messages of frameworks other than PyTorch, read for the same facts (issue 12, items 1-2):
// Apple's MPS backend, TensorFlow 1.x's "OOM when allocating tensor ... device:GPU:0" and PaddlePaddle's "Out of memory error on
// GPU 0. Cannot allocate X memory on GPU 0, Y memory has been allocated and available memory is only Z".
// Real issue texts kept as the cuda-oom rule's match examples (sources in their first line).
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from './corpus-case.js';

const dir = resolve(import.meta.dirname, '../../knowledge/cuda-oom/match');

async function best(file: string) {
  const stdout = await diagnoseOutput(['--json', resolve(dir, file)]);
  return JSON.parse(stdout).diagnoses[0] as { category: string; facts: Record<string, unknown>; fixes: { summary: string }[] };
}

describe("other frameworks' OOM messages", () => {
  it('TensorFlow 1.x "OOM when allocating tensor ... device:GPU:0": a CUDA OOM on GPU 0, answered with Keras\'s own batch knob', async () => {
    const d = await best('tf-models-7142-oom-allocating-tensor.log');
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.gpuIndex).toBe(0);
    expect(d.fixes[0].summary).toMatch(/model\.fit/);
    // The tensor that did not fit, shape[500,17,17,4032], is an activation led by the batch: 500 -> 250.
    expect(d.facts).toMatchObject({ batch: 500, batchFromShape: 'shape[500,17,17,4032]', holder: 'activations' });
    expect(d.fixes[0].summary).toMatch(/: 500 \(the leading dimension of the tensor that did not fit, shape\[500,17,17,4032\]\) -> 250\b/);
  });

  it('a 2-D tensor (a weight or its Adam slot, shape[123008,500]) is not read as a batch', async () => {
    const stdout = await diagnoseOutput(['--json', resolve(import.meta.dirname, '../fixtures/eval-extra/010-cuda_oom.log')]);
    const d = JSON.parse(stdout).diagnoses[0];
    expect(d.facts.batchFromShape).toBeUndefined();
  });

  it('PaddlePaddle: the request, the allocated and the available memory are read from its six-decimal figures', async () => {
    const a = await best('paddleocr-645-out-of-memory-error-on-gpu.log');
    expect(a.category).toBe('cuda_oom');
    expect(a.facts).toMatchObject({ triedAllocMiB: 3200, freeMiB: 117.75, gpuIndex: 0 });
    const b = await best('paddle-42228-allocated-6gb.log');
    expect(b.facts).toMatchObject({ triedAllocMiB: 98, allocatedMiB: 6144, freeMiB: 0 });
    expect(b.fixes[0].summary).toMatch(/batch_size_per_card/);
  });

  it('Apple MPS "backend out of memory" in backward: a GPU-memory OOM with its allocated and allowed figures, the batch halved', async () => {
    const d = await best('pytorch-152351-mps-backward.log');
    expect(d.category).toBe('cuda_oom');
    expect(d.facts).toMatchObject({ triedAllocMiB: 375.4, allocatedMiB: 11407.36, totalCapacityMiB: 18565.12, oomPhase: 'backward' });
    expect(d.fixes[0].summary).toMatch(/Reduce the batch: 8 \(Hugging Face Trainer's default\) -> 4/);
  });
});

describe("XLA's own figures (JAX on TPU and GPU)", () => {
  it('"Used 30.21G of 15.48G hbm" with 15.90G of arguments (tuned vision/138, Gemma 7B): the weights, sharding or a quantized model, no batch', async () => {
    const stdout = await diagnoseOutput(['--json', resolve(import.meta.dirname, '../fixtures/untuned/vision/138-cuda_oom.log')]);
    const d = JSON.parse(stdout).diagnoses[0];
    expect(d.facts).toMatchObject({ holder: 'weights', totalCapacityMiB: 15851.52, xlaUsedMiB: 30935.04, xlaArgumentsMiB: 16281.6 });
    expect(d.facts.holderWhy).toMatch(/15\.90 GiB of arguments .* against 15\.48 GiB/);
    expect(d.fixes[0].summary).toMatch(/quantized/);
    expect(d.fixes[0].summary).toMatch(/jax\.sharding Mesh/);
    expect(d.fixes.some((f: { changes: { batch?: number } }) => typeof f.changes.batch === 'number')).toBe(false);
  });

  it('"Used 21.95G of 15.48G hbm" with 0B of arguments (LWM#60): the program\'s temporaries, not the weights', async () => {
    const d = await best('lwm-60-xla-tpu-hbm.log');
    expect(d.facts).toMatchObject({ holder: 'activations', xlaProgramMiB: 22476.8, xlaArgumentsMiB: 0 });
    expect(d.facts.holderWhy).toMatch(/21\.95 GiB of temporaries \(activations\), 21\.95 GiB in all on a 15\.48 GiB device/);
  });

  it('"Out of memory while trying to allocate 14285187448 bytes" (ColabFold#65): the request is read', async () => {
    const d = await best('colabfold-65-xla-resource-exhausted.log');
    expect(d.facts.triedAllocMiB).toBeCloseTo(13623.6, 0);
  });
});
