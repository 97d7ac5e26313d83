// Work after the model's forward, named by the library that does it (issue 23: each phase has its own levers;
// src/diagnose/levers/eval-post.ts, volatile.ts): NMS over one image's candidate boxes, a metric library's list states,
// faiss-gpu's k-NN buffers, and PyTorch 0.4's removal of volatile. Each is read from a fixed form (frame names and files,
// faiss's own allocation messages, PyTorch's warning and version strings), never from a thread's wording. Real threads
// (blind9 read split) beside synthetic variants written from each library's source strings (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const NMS = /^The card ran out in non-maximum suppression/;
// TorchMetrics' list-state metrics get levers/metric-states.ts's text; other metric libraries eval-post.ts's.
const METRIC = /^The card ran out in a metric library's update|^The paste shows a TorchMetrics metric/;
const FAISS = /^faiss-gpu could not allocate/;
const VOLATILE = /^PyTorch 0\.4 removed Variable/;
const FLAIR = /^flair's Transformer(?:Document|Word)Embeddings fine-tunes by default/;
const OOM = (gib: string) =>
  `torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate ${gib} GiB (GPU 0; 23.65 GiB total capacity; 21.12 GiB already allocated; 1.02 GiB free; 21.80 GiB reserved in total by PyTorch)`;
const frame = (file: string, fn: string, code: string) => [`  File "${file}", line 42, in ${fn}`, `    ${code}`];

describe('real threads (blind9 read split)', () => {
  it('5713: YOLOR test.py -> non_max_suppression -> torchvision.nms at batch 1: cap the candidates', async () => {
    const d = first(await firstOfCase('blind9', '5713'));
    expect(d).toMatch(NMS);
    expect(d).toMatch(/general\.py, in non_max_suppression/);
    expect(d).toMatch(/max_nms|conf_thres/);
  });
  it('5728: Lightning validation_step_end -> torchmetrics: metric states on the CPU', async () => {
    const d = first(await firstOfCase('blind9', '5728'));
    expect(d).toMatch(METRIC);
    expect(d).toMatch(/compute_on_cpu/);
  });
  it('5730: faiss "Failed to cudaMalloc 1610612736 bytes": queries in chunks, k, a CPU index', async () => {
    const d = first(await firstOfCase('blind9', '5730'));
    expect(d).toMatch(FAISS);
    expect(d).toMatch(/1\.50 GiB/);
    expect(d).toMatch(/in chunks/);
  });
  it('5714: flair TransformerDocumentEmbeddings embedding 20k documents in a loop: fine_tune=False / no_grad', async () => {
    const d = first(await firstOfCase('blind9', '5714'));
    expect(d).toMatch(FLAIR);
    expect(d).toMatch(/fine_tune=False/);
  });
  it('5712: runs on PyTorch 0.3.0, OOM on 0.4.0: no_grad in place of volatile', async () => {
    const d = first(await firstOfCase('blind9', '5712'));
    expect(d).toMatch(VOLATILE);
    expect(d).toMatch(/torch\.no_grad\(\)/);
  });
});

describe('synthetic variants: NMS frames (YOLOv5/ultralytics, torchvision, mmcv)', () => {
  it('ultralytics ops.py non_max_suppression -> torchvision.ops.nms in predict', async () => {
    const paste = [
      'Traceback (most recent call last):',
      ...frame('/opt/ultralytics/engine/predictor.py', 'stream_inference', 'self.results = self.postprocess(preds, im, im0s)'),
      ...frame('/opt/ultralytics/utils/ops.py', 'non_max_suppression', 'i = torchvision.ops.nms(boxes, scores, iou_thres)'),
      OOM('6.20'),
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(NMS);
  });
  it("torchvision's batched_nms innermost under a script's evaluate()", async () => {
    const paste = [
      'Traceback (most recent call last):',
      ...frame('eval.py', 'evaluate', 'keep = batched_nms(boxes, scores, labels, 0.5)'),
      ...frame(
        '/usr/lib/python3/site-packages/torchvision/ops/boxes.py',
        '_batched_nms_vanilla',
        'curr_keep_indices = nms(boxes[curr_indices], scores[curr_indices], iou_threshold)',
      ),
      OOM('3.10'),
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(NMS);
  });
  it("mmdet's mask_matrix_nms (SOLO) innermost, with figures that alone would read as fragmentation", async () => {
    const paste = [
      'Traceback (most recent call last):',
      ...frame('/x/mmdet/models/dense_heads/solo_head.py', '_get_results_single', 'scores, labels, _, keep_inds = mask_matrix_nms('),
      ...frame('/x/mmdet/models/layers/matrix_nms.py', 'mask_matrix_nms', 'inter_matrix = torch.mm(flatten_masks, flatten_masks.transpose(1, 0))'),
      'RuntimeError: CUDA out of memory. Tried to allocate 2.98 GiB (GPU 0; 10.76 GiB total capacity; 1.19 GiB already allocated; 2.35 GiB free; 7.46 GiB reserved in total by PyTorch)',
    ].join('\n');
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(NMS);
  });
  it('control: an NMS call only far outside the failing frames is not named', async () => {
    const paste = [
      'Traceback (most recent call last):',
      ...frame('detect.py', 'run', 'pred = non_max_suppression(model(im), conf_thres)'),
      ...frame('/x/models/yolo.py', 'forward', 'return self._forward_once(x)'),
      ...frame('/x/torch/nn/modules/module.py', '_call_impl', 'return forward_call(*input, **kwargs)'),
      ...frame('/x/torch/nn/modules/conv.py', 'forward', 'return self._conv_forward(input, self.weight, self.bias)'),
      OOM('3.10'),
    ].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(NMS);
  });
});

describe('synthetic variants: metric libraries (torchmetrics, torcheval, Ignite)', () => {
  it('torchmetrics BinaryAUROC update under a validation loop', async () => {
    const paste = [
      'Traceback (most recent call last):',
      ...frame('train.py', 'validate', 'auroc.update(probs.flatten(), target.flatten())'),
      ...frame('/env/lib/python3.10/site-packages/torchmetrics/metric.py', 'wrapped_func', 'update(*args, **kwargs)'),
      ...frame('/env/lib/python3.10/site-packages/torchmetrics/classification/precision_recall_curve.py', 'update', 'self.preds.append(state[0])'),
      OOM('2.00'),
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(METRIC);
  });
  it("Ignite's EpochMetric (ROC_AUC) as the failing frame", async () => {
    const paste = [
      'Traceback (most recent call last):',
      ...frame('/env/site-packages/ignite/engine/engine.py', '_fire_event', 'func(*first, *(event_args + others), **kwargs)'),
      ...frame('/env/site-packages/ignite/metrics/epoch_metric.py', 'update', 'self._predictions.append(y_pred)'),
      OOM('1.25'),
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(METRIC);
  });
  it("MONAI's cumulative metric buffers (monai/metrics)", async () => {
    const paste = [
      'Traceback (most recent call last):',
      ...frame('seg.py', 'validation', 'dice_metric(y_pred=val_outputs, y=val_labels)'),
      ...frame('/env/site-packages/monai/metrics/metric.py', '__call__', 'self.extend(ret)'),
      OOM('1.25'),
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(METRIC);
  });
  it('control: no metric frame, no metric text', async () => {
    const paste = ['Traceback (most recent call last):', ...frame('train.py', 'validate', 'out = model(x)'), OOM('1.25')].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(METRIC);
  });
});

describe("synthetic variants: faiss-gpu's allocation messages (StandardGpuResources.cpp, by version)", () => {
  it('1.7+: "StandardGpuResources: alloc fail ... size N bytes (cudaMalloc error out of memory [2])"', async () => {
    const paste =
      "RuntimeError: Error in virtual void* faiss::gpu::StandardGpuResourcesImpl::allocMemory(const faiss::gpu::AllocRequest&) at /project/faiss/faiss/gpu/StandardGpuResources.cpp:452: Error: 'err == cudaSuccess' failed: StandardGpuResources: alloc fail type TemporaryMemoryOverflow dev 0 space Device stream 0x5581 size 4294967296 bytes (cudaMalloc error out of memory [2])";
    const d = first(await diagnosePaste(paste));
    expect(d).toMatch(FAISS);
    expect(d).toMatch(/4\.00 GiB/);
  });
  it('1.6: "Failed to cudaMalloc N bytes on device D (error 2 out of memory" with its outstanding allocations', async () => {
    const paste = [
      "RuntimeError: Error in virtual void* faiss::gpu::StandardGpuResourcesImpl::allocMemory(const faiss::gpu::AllocRequest&) at /root/faiss/gpu/StandardGpuResources.cpp:443: Error: 'err == cudaSuccess' failed: Failed to cudaMalloc 536870912 bytes on device 1 (error 2 out of memory",
      'Outstanding allocations:',
      'Alloc type FlatData: 1 allocations, 1073741824 bytes',
    ].join('\n');
    const d = first(await diagnosePaste(paste));
    expect(d).toMatch(FAISS);
    expect(d).toMatch(/512 MiB/);
  });
});

describe('tuned threads (eval12, labelled before the first run)', () => {
  it('6306: the old MemorySpace.cpp form "failed to cudaMalloc N bytes (error 2 out of memory)" (added after the first run)', async () => {
    const d = first(await firstOfCase('eval12', '6306'));
    expect(d).toMatch(FAISS);
    expect(d).toMatch(/1\.50 GiB/);
  });
  it('6302: a torchmetrics collection update in a test loop', async () => {
    expect(first(await firstOfCase('eval12', '6302'))).toMatch(METRIC);
  });
  it('6307: the volatile warning under a test.py forward', async () => {
    expect(first(await firstOfCase('eval12', '6307'))).toMatch(VOLATILE);
  });
});

describe("synthetic variants: PyTorch 0.4's removal of volatile", () => {
  it('the autograd warning beside an OOM', async () => {
    const paste = [
      'test.py:88: UserWarning: volatile was removed and now has no effect. Use `with torch.no_grad():` instead.',
      '  inputs = Variable(inputs.cuda(), volatile=True)',
      'RuntimeError: CUDA error: out of memory',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(VOLATILE);
  });
  it('the upgrade told by version strings (torch==0.3.1 works, torch 1.0.1 runs out)', async () => {
    const paste = [
      'It worked with torch==0.3.1 but after upgrading to torch 1.0.1 I get',
      'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(VOLATILE);
  });
  it('control: versions 1.x and 2.x only are no such upgrade', async () => {
    const paste = ['It worked with torch 1.13.1 but with torch 2.1.0 I get', 'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB'].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(VOLATILE);
  });
});

describe("synthetic variants: flair's transformer embeddings (fine_tune=True by default)", () => {
  const oom = 'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB';
  it('TransformerWordEmbeddings embedding sentences in a loop', async () => {
    const paste = ["emb = TransformerWordEmbeddings('roberta-base')", 'for s in sentences:', '    emb.embed(s)', '    vecs.append(s[0].embedding)', oom].join(
      '\n',
    );
    expect(first(await diagnosePaste(paste))).toMatch(FLAIR);
  });
  it('control: fine_tune=False already set', async () => {
    const paste = ["emb = TransformerDocumentEmbeddings('bert-base-uncased', fine_tune=False)", 'emb.embed(sentence)', oom].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(FLAIR);
  });
  it("control: flair's ModelTrainer fine-tunes on purpose", async () => {
    const paste = [
      "emb = TransformerDocumentEmbeddings('bert-base-uncased')",
      'trainer = ModelTrainer(classifier, corpus)',
      'trainer.train("out")',
      'emb.embed(sentence)',
      oom,
    ].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(FLAIR);
  });
});
