// One input's spatial size as a lever (issue 23, src/diagnose/levers/input-size.ts): a vision network's
// activations grow with each input's pixels, so where the paste states a large input (a setting's own name with
// one value or an (H, W) pair, a "W x H" in the report, a 4-d tensor shape in the error) and the batch is 1 or 2
// or none, the first fix is the image size, not halving the batch. Synthetic variants written from the principle
// (different tools, settings and languages) beside the real threads holdout/800 (crop_size 1024x2048), holdout/813
// (TF shape[1,5095,3729,3]) and sealed/953 (2048*2048 at batch 1).
import { describe, expect, it } from 'vitest';
import { inputSizeFirst, readInputSize } from '../../src/diagnose/levers/input-size.js';
import { firstOfCase, type CaseDiagnosis, diagnosePaste } from './corpus-case.js';
import { incidentOf, type Incident } from '../../src/diagnose/incident/index.js';

// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const OOM =
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 22.60 GiB memory in use. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 280.00 MiB is reserved by PyTorch but unallocated.';

describe('the stated input size is read from settings, W x H and tensor shapes', () => {
  it.each([
    ['mmseg crop_size pair', 'crop_size = (1024, 2048)', 1024 * 2048],
    ['YOLO flag', 'python train.py --img-size 1536 --batch 2', 1536 * 1536],
    ['ultralytics keyword', 'model.train(data="x.yaml", imgsz=1280, batch=1)', 1280 * 1280],
    ['neural-style single dash with px', 'th neural_style.lua -image_size 800px', 800 * 800],
    ['YAML list', 'image_size: [1024, 1024]', 1024 * 1024],
    ['Detectron2 key', 'INPUT.MAX_SIZE_TRAIN 2048', 2048 * 2048],
    ['report W x H', 'generating at 1216x832 works, 1536x1024 runs out', 1536 * 1024],
    ['report with a star, in Chinese', '训练图像是2048*2048的，batch=1，12G显存爆了', 2048 * 2048],
    ['TF NHWC shape', 'OOM when allocating tensor with shape[1,5095,3729,3] and type float', 5095 * 3729],
    ['PyTorch NCHW shape', 'input of size [1, 3, 2048, 2048] fails', 2048 * 2048],
  ])('%s', (_name, text, pixels) => {
    const got = readInputSize(text);
    expect(got.inputPixels).toBe(pixels);
    expect(got.inputSizeSetting).toBeTruthy();
  });
  it('small numbers, versions and matrix products are no input size', () => {
    expect(readInputSize('kernel 3x3, stride 2, 64x64 patches').inputPixels).toBeUndefined();
    expect(readInputSize('torch 2.1.0, CUDA 12.1, driver 535.104').inputPixels).toBeUndefined();
    expect(readInputSize('crop_size = (512, 1024, 3, 7)').inputPixels).toBeUndefined();
  });
  it.each([
    ['English, still after the change', 'I run 896*896 during seg training. However, I still encounter this problem when I change it to 512*512.'],
    ['English, lowered then still', 'lowered the resolution to 768x768 and it still fails; crop_size = (1024, 1024)'],
    ['Chinese', '训练1024*1024，改成512*512还是爆显存'],
  ])('a smaller input tried without help is no input lever: %s', (_name, text) => {
    expect(readInputSize(text).inputPixels).toBeUndefined();
  });
  it('the half to test keeps the aspect', () => {
    expect(readInputSize('crop_size = (1024, 2048)').inputSizeNext).toBe('512×1024');
    expect(readInputSize('--imgsz 1280').inputSizeNext).toBe('640');
  });
});

describe('preconditions: a large input, a batch of 1 or 2 or none, a phase that runs inputs, nothing that grows', () => {
  const base: Incident = incidentOf({ input: { inputPixels: 2048 * 2048 }, run: { batch: 1, training: true } });
  it('batch 1 at 2048 x 2048: the input', () => expect(inputSizeFirst(base)).toBe(true));
  it('no batch stated: the input', () => expect(inputSizeFirst(incidentOf(base, { run: { batch: undefined } }))).toBe(true));
  it('generation: the input', () =>
    expect(inputSizeFirst(incidentOf(base, { run: { batch: undefined }, phase: { name: 'generate', generating: true } }))).toBe(true));
  it('batch 8 keeps the batch lever', () => expect(inputSizeFirst(incidentOf(base, { run: { batch: 8 } }))).toBe(false));
  it("a tool's default batch is not a stated one", () => expect(inputSizeFirst(incidentOf(base, { run: { batch: 16, batchDefaultOf: 'YOLOv5' } }))).toBe(true));
  it("YOLO's 640 is not large", () => expect(inputSizeFirst(incidentOf(base, { input: { inputPixels: 640 * 640 } }))).toBe(false));
  it('growth is not the input', () => expect(inputSizeFirst(incidentOf(base, { series: { memoryShape: 'growth' } }))).toBe(false));
  it('a model load is not the input', () => expect(inputSizeFirst(incidentOf(base, { phase: { name: 'load' } }))).toBe(false));
  it('evaluation has its own levers', () => expect(inputSizeFirst(incidentOf(base, { phase: { name: 'eval' } }))).toBe(false));
});

describe('through the CLI: the first fix is the image size, not the batch', () => {
  it.each([
    ['YOLO at imgsz 2048, batch 1', 'yolo train model=yolov8s.pt data=tiles.yaml imgsz=2048 batch=1'],
    ['mmseg crop_size at samples_per_gpu 2', 'crop_size = (1024, 2048)\ndata = dict(samples_per_gpu=2, workers_per_gpu=2)'],
    ['a report in Chinese, no batch', '用 1536x1536 的图片训练分割模型，一开始就爆显存'],
    [
      'segmentation inference on one big image',
      'masks = predictor.predict(image)  # image is 4000x3000\n  File "segment_anything/predictor.py", line 150, in predict',
    ],
  ])('%s', async (_name, settings) => {
    const d = await diagnoseText(`${settings}\n${OOM}`);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/One input is large/);
    expect(first(d)).toMatch(/image size \/ resolution/);
    expect(d?.fixes[0]?.changes.batch).toBeUndefined();
  });
  it('a batch of 16 at 1536 keeps the batch lever', async () => {
    const d = await diagnoseText(`python train.py --img-size 1536 --batch-size 16\n${OOM}`);
    expect(first(d)).not.toMatch(/One input is large/);
    expect(d?.fixes[0]?.changes.batch).toBe(8);
  });
  it('640 x 640 at batch 1 is not a large input', async () => {
    const d = await diagnoseText(`yolo train imgsz=640 batch=1\n${OOM}`);
    expect(first(d)).not.toMatch(/One input is large/);
  });
  it('another process holding the card comes first', async () => {
    const d = await diagnoseText(
      'imgsz=2048 batch=1\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.02 GiB is free. Process 1234 has 12.00 GiB memory in use. Including non-PyTorch memory, this process has 10.60 GiB memory in use. Of the allocated memory 9.90 GiB is allocated by PyTorch, and 280.00 MiB is reserved by PyTorch but unallocated.',
    );
    expect(first(d)).not.toMatch(/One input is large/);
  });
  it.each([
    ['holdout', '800', /crop_size = \(1024, 2048\)/],
    ['holdout', '813', /shape\[1,5095,3729,3\]/],
    ['sealed', '953', /2048\*2048/],
  ])('%s/%s: the stated input, quoted', async (group, num, quote) => {
    const d = await firstOfCase(group, num);
    expect(first(d)).toMatch(/One input is large/);
    expect(first(d)).toMatch(quote);
  });
});
