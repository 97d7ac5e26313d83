// The YOLO family's per-epoch validation inside train.py (issue 23: each phase has its own levers). YOLOv5 before v6,
// YOLOv7 and ultralytics/yolov3 call it by a fixed line a traceback quotes ("results, maps, times = test.test(data_dict,",
// "results, maps, _ = validate.run(data_dict,", "results, maps = test.test(cfg,") at batch_size * 2, under no_grad,
// and print a fixed table header while it runs ("Class Images Labels P R mAP@.5"). no_grad is then no lever (it is on);
// the validation batch is. Real thread (blind8 read split) beside synthetic variants from train.py's source (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const YOLO_VAL = /^The card ran out in the validation train\.py runs after each epoch/;
// Ultralytics' own forms (validate.run, the Instances / Box(P header) get its trainer's text, with its flags.
const ULTRA_VAL = /^The card ran out in Ultralytics' validation/;
const oom =
  'RuntimeError: CUDA out of memory. Tried to allocate 1.25 GiB (GPU 0; 7.79 GiB total capacity; 5.10 GiB already allocated; 1.02 GiB free; 5.60 GiB reserved in total by PyTorch)';
const frames = (call: string, file = 'test.py', fn = 'test') =>
  [
    'Traceback (most recent call last):',
    '  File "train.py", line 609, in <module>',
    '    train(hyp, opt, device, tb_writer)',
    '  File "train.py", line 412, in train',
    `    ${call}`,
    `  File "/home/u/yolo/${file}", line 110, in ${fn}`,
    '    out, train_out = model(img, augment=augment)  # inference and training outputs',
    oom,
  ].join('\n');

describe('real thread', () => {
  it('blind8/5606: YOLOv7 test.test() at 89% of validation: the doubled validation batch, not no_grad', async () => {
    const d = first(await firstOfCase('blind8', '5606'));
    expect(d).toMatch(YOLO_VAL);
    expect(d).toMatch(/test\.test\(/);
    expect(d).toMatch(/batch_size \* 2/);
    expect(d).not.toMatch(/^.{0,200}Wrap the loop in `with torch\.inference_mode/);
  });
});

describe('tuned thread (eval11, read while the phase reader below was written)', () => {
  it('eval11/5800: no frame, the validation header is the last progress line before the traceback', async () => {
    const d = first(await firstOfCase('eval11', '5800'));
    expect(d).toMatch(YOLO_VAL);
    expect(d).toMatch(/0%\|/);
  });
});

describe('synthetic variants: the validation header as the last progress line (from the YOLO log formats)', () => {
  const train = '      2/299     7.09G    0.1008   0.09135    0.1026    0.2947        21       640: 100%|#| 64/64 [00:07<00:00,  8.2';
  it.each([
    [
      'YOLOv5 5.x / YOLOv7 header',
      '               Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95:   3%|3         | 2/64 [00:01<00:40',
    ],
  ])('%s before a traceback cut above its frames', async (_n, header) => {
    const paste = [
      '     Epoch   gpu_mem       box       obj       cls     total    labels  img_size',
      train,
      header,
      'Traceback (most recent call last):',
      oom,
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(YOLO_VAL);
  });
  it.each([
    ['YOLOv5 7.x header', '                 Class     Images  Instances          P          R      mAP50   mAP50-95:  10%|█         | 5/50 [00:02<00:20'],
    ['YOLOv8+ header', '                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95):  20%|██        | 10/50 [00:03<00:12'],
  ])("%s (Ultralytics' own form): its trainer's text", async (_n, header) => {
    const paste = [
      '      1/100      7.25G      1.118      1.355      1.217         45        640: 100%|██████████| 500/500 [02:00<00:00',
      header,
      'Traceback (most recent call last):',
      oom,
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(ULTRA_VAL);
  });
  it('control: a training bar after the last validation header places the failure in training', async () => {
    const paste = [
      '     Epoch   gpu_mem       box       obj       cls     total    labels  img_size',
      '               Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95: 100%|#| 64/64 [00:23',
      train,
      'Traceback (most recent call last):',
      oom,
    ].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(YOLO_VAL);
  });
});

describe('synthetic variants (from the train.py call lines)', () => {
  it.each([
    ['YOLOv7 / YOLOv5 < 6', 'results, maps, times = test.test(data_dict,', 'test.py', 'test'],
    ['ultralytics/yolov3', 'results, maps = test.test(cfg,', 'test.py', 'test'],
  ])('%s: the validation call leads with the validation batch', async (_n, call, file, fn) => {
    const d = first(await diagnosePaste(frames(call, file, fn)));
    expect(d).toMatch(YOLO_VAL);
    expect(d).toContain(call);
  });
  it("a YOLOv5 6+ fork's validate.run, not named as YOLOv5: Ultralytics' text", async () => {
    const d = first(await diagnosePaste(frames('results, maps, _ = validate.run(data_dict,', 'val.py', 'run')));
    expect(d).toMatch(ULTRA_VAL);
    expect(d).toMatch(/--noval|val=False/);
  });
  it('the table header alone, a validation failure said in words', async () => {
    const paste = [
      'OOM during validation after the first epoch',
      '               Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95:  42%|████▏     | 40/95 [00:10<00:14,  3.80it/s]',
      oom,
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(YOLO_VAL);
  });
  it('control: a script of its own that calls test.test is not read as YOLO', async () => {
    const paste = frames('acc = test.test(model, loader)');
    expect(first(await diagnosePaste(paste))).not.toMatch(YOLO_VAL);
  });
});
