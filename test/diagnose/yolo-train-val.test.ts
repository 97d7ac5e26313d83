// The YOLO family's per-epoch validation inside train.py (issue 23: each phase has its own levers). YOLOv5 before v6,
// YOLOv7 and ultralytics/yolov3 call it by a fixed line a traceback quotes ("results, maps, times = test.test(data_dict,",
// "results, maps, _ = validate.run(data_dict,", "results, maps = test.test(cfg,") at batch_size * 2, under no_grad,
// and print a fixed table header while it runs ("Class Images Labels P R mAP@.5"). no_grad is then no lever (it is on);
// the validation batch is. Real thread (blind8 read split) beside synthetic variants from train.py's source (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const YOLO_VAL = /^The card ran out in the validation train\.py runs after each epoch/;
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

describe('synthetic variants (from the train.py call lines)', () => {
  it.each([
    ['YOLOv7 / YOLOv5 < 6', 'results, maps, times = test.test(data_dict,'],
    ['ultralytics/yolov3', 'results, maps = test.test(cfg,'],
    ['a YOLOv5 6+ fork not named as YOLOv5', 'results, maps, _ = validate.run(data_dict,', 'val.py', 'run'],
  ])('%s: the validation call leads with the validation batch', async (_n, call, file, fn) => {
    const d = first(await diagnosePaste(frames(call, file, fn)));
    expect(d).toMatch(YOLO_VAL);
    expect(d).toContain(call);
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
