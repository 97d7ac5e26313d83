// TorchMetrics' list states (issue 23, growth): a metric that keeps every update's preds and targets on its device
// (curve metrics with thresholds=None, CalibrationError, rank correlations, retrieval) fills the card until reset();
// named by its task-prefixed class, its import or the failure in its frames, it is the first lever, not the batch or
// the allocator. Synthetic variants written from TorchMetrics' names beside the real blind9 threads; a metric
// without list states is not read.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const oom =
  'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 194.00 MiB (GPU 0; 10.92 GiB total capacity; 9.63 GiB already allocated; 87.38 MiB free; 10.39 GiB reserved in total by PyTorch)';

describe("TorchMetrics' list states: reset() before the batch or the allocator", () => {
  it.each([
    [
      'a task-prefixed curve metric and a told leak',
      `Memory leak with MulticlassPrecisionRecallCurve\nThe GPU memory keeps growing every validation.\n${oom}`,
      'growing_memory_leak',
    ],
    [
      'an import of the curve metric and a told leak',
      `from torchmetrics.classification import BinaryROC\nmemory leak after a few epochs\n${oom}`,
      'growing_memory_leak',
    ],
    [
      "the failure inside TorchMetrics' update frame",
      `  File "/usr/lib/python3.10/site-packages/torchmetrics/metric.py", line 492, in wrapped_func\n    update(*args, **kwargs)\n  File "/usr/lib/python3.10/site-packages/torchmetrics/classification/precision_recall_curve.py", line 160, in update\n${oom}`,
      'cuda_oom',
    ],
    [
      'the concatenation of the states at compute',
      `  File "/usr/lib/python3.10/site-packages/torchmetrics/utilities/data.py", line 39, in dim_zero_cat\n    return torch.cat(x, dim=0)\n${oom}`,
      'cuda_oom',
    ],
  ])('synthetic: %s', async (_name, text, category) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe(category);
    expect(first(d)).toMatch(/reset\(\)/);
    expect((d?.fixes ?? []).every((f) => typeof f.changes.batch !== 'number')).toBe(true);
  });
  it('synthetic: a metric without list states (Accuracy) is not read', async () => {
    const d = await diagnosePaste(`from torchmetrics import Accuracy\nThe GPU memory keeps growing every epoch.\n${oom}`);
    expect(first(d)).not.toMatch(/TorchMetrics metric/);
  });
  it('real thread (blind9/5769, curve metrics created one after another): growth, reset()', async () => {
    const d = await firstOfCase('blind9', '5769');
    expect(d?.category).toBe('growing_memory_leak');
    expect(first(d)).toMatch(/BinaryAUROC.*reset\(\)/);
  });
  it('real thread (blind9/5728, anomalib pixel metrics in validation): the metric states, not the batch', async () => {
    const d = await firstOfCase('blind9', '5728');
    expect(first(d)).toMatch(/compute_on_cpu/);
  });
});
