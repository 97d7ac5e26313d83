// Principle (issue 23, growth; session 36 h1): a growth's first fix is its stack's. TensorFlow keeps what a loop adds to
// its graph (ops built per step, predict() per call in a loop), so its first fix names building ops once /
// graph.finalize() / predict_on_batch; a PyTorch growth keeps the allocator experiment (allocated against reserved).
// Real cases from the read split blind7/blind6 beside synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe("a TensorFlow growth's first fix is the graph's", () => {
  it('real: TF 2.0 predict() in a loop eats all RAM, gone on 1.14 (blind6 3817)', async () => {
    const d = await firstOfCase('blind6', '3817');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/predict_on_batch/);
  });
  it('a TF import alone names the stack (synthetic)', async () => {
    const d = await diagnosePaste('Leak\nimport tensorflow as tf\nThe GPU memory keeps increasing during training.');
    expect(d?.fixes[0].summary).toMatch(/graph\.finalize\(\)/);
  });
  it('a TF 2 Keras script in a loop: model() / predict_on_batch (synthetic)', async () => {
    const d = await diagnosePaste(
      'Memory leak\nfrom tensorflow.keras import Model\nCalling predict() in a loop, memory consumption increases indefinitely over time.',
    );
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/predict_on_batch/);
  });
  it('a PyTorch growth keeps the allocator experiment (synthetic)', async () => {
    const d = await diagnosePaste('Leak\nimport torch\nThe GPU memory keeps increasing during training.');
    expect(d?.fixes[0].summary).toMatch(/memory_allocated\(\)/);
  });
});
