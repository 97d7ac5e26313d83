// The corrected command line (src/diagnose/fixes/command-line.ts): every flag style the tools use, and
// no "corrected" command when nothing changed. Real logs through the CLI are in fixes-cli.test.ts.
import { describe, expect, it } from 'vitest';
import { rewriteCommandLine } from '../../src/diagnose/fixes/command-line.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { parseCommand } from '../../src/diagnose/tool-cli.js';

const base = await loadRuleBase();
/** Rewritten as the diagnosis does: the command parsed against knowledge/tools.yaml, the log's tool given. */
const rw = (command: string, changes: Record<string, number | string | boolean>, tool?: string, append = {}) =>
  rewriteCommandLine(command, changes, append, parseCommand(command, base.tools!.clis, tool));

const YOLOV5 = 'python train.py --img 1280 --batch-size 16 --data x.yaml';

describe('rewriteCommandLine: flag styles', () => {
  it('mmcv / mmengine --cfg-options keys in place, with their dotted path kept', () => {
    expect(rewriteCommandLine('python tools/train.py cfg.py --cfg-options train_dataloader.batch_size=4 randomness.seed=0', { batch: 2 })).toBe(
      'python tools/train.py cfg.py --cfg-options train_dataloader.batch_size=2 randomness.seed=0',
    );
    expect(rewriteCommandLine('python tools/train.py cfg.py --cfg-options data.samples_per_gpu=8 data.workers_per_gpu=8', { batch: 4 })).toBe(
      'python tools/train.py cfg.py --cfg-options data.samples_per_gpu=4 data.workers_per_gpu=8',
    );
  });

  it('Hydra overrides: a dotted path and ++ prefixes are kept, only the value changes', () => {
    expect(rewriteCommandLine('python train.py experiment=x data.batch_size=32 trainer.devices=2', { batch: 16 })).toBe(
      'python train.py experiment=x data.batch_size=16 trainer.devices=2',
    );
    expect(rewriteCommandLine('python main.py ++training.batch_size=8', { batch: 4 })).toBe('python main.py ++training.batch_size=4');
    // A key that merely ends in the name is another setting.
    expect(rewriteCommandLine('python main.py data.eval_batch_size=8', { batch: 4 })).toBeUndefined();
  });

  it('detectron2 yacs opts after the config: `SOLVER.IMS_PER_BATCH 16`', () => {
    expect(rewriteCommandLine('python tools/train_net.py --config-file c.yaml SOLVER.IMS_PER_BATCH 16 SOLVER.BASE_LR 0.02', { batch: 8 })).toBe(
      'python tools/train_net.py --config-file c.yaml SOLVER.IMS_PER_BATCH 8 SOLVER.BASE_LR 0.02',
    );
    expect(rewriteCommandLine('python train_net.py --num-gpus 1 DATALOADER.NUM_WORKERS 16', { workers: 4 })).toBe(
      'python train_net.py --num-gpus 1 DATALOADER.NUM_WORKERS 4',
    );
  });

  it("a batch the command does not set is added in the tool's syntax when the tool is known", () => {
    expect(rewriteCommandLine('yolo detect train data=coco.yaml imgsz=1280', { batch: 8 }, { batch: 'batch=' })).toBe(
      'yolo detect train data=coco.yaml imgsz=1280 batch=8',
    );
    expect(rewriteCommandLine('python train.py --img 1280 --data x.yaml', { batch: 8 }, { batch: '--batch-size ' })).toBe(
      'python train.py --img 1280 --data x.yaml --batch-size 8',
    );
    expect(
      rewriteCommandLine('python tools/train.py c.py --cfg-options a=1 --work-dir w', { batch: 2 }, { batch: '--cfg-options train_dataloader.batch_size=' }),
    ).toBe('python tools/train.py c.py --cfg-options train_dataloader.batch_size=2 a=1 --work-dir w');
    // Without the tool's syntax nothing is guessed.
    expect(rewriteCommandLine('python train.py --img 1280', { batch: 8 })).toBeUndefined();
  });

  it('argparse `--name value` in place, the rest untouched', () => {
    expect(rewriteCommandLine(YOLOV5, { batch: 8 })).toBe('python train.py --img 1280 --batch-size 8 --data x.yaml');
    expect(rewriteCommandLine(YOLOV5, { imgsz: 1024 })).toBe('python train.py --img 1024 --batch-size 16 --data x.yaml');
    expect(rewriteCommandLine(YOLOV5, { batch: 8, imgsz: 1024 })).toBe('python train.py --img 1024 --batch-size 8 --data x.yaml');
  });

  it('`--name=value` keeps its `=` (and quotes), and a flag at the end of the line', () => {
    expect(rewriteCommandLine('python train.py --batch-size=16 --img-size=640', { batch: 8, imgsz: 512 })).toBe(
      'python train.py --batch-size=8 --img-size=512',
    );
    expect(rewriteCommandLine('python train.py --batch-size="16"', { batch: 8 })).toBe('python train.py --batch-size="8"');
    expect(rewriteCommandLine("python train.py --batch-size '16'", { batch: 8 })).toBe("python train.py --batch-size '8'");
    expect(rewriteCommandLine('python train.py --batch-size="8"', { batch: 8 })).toBeUndefined();
    expect(rewriteCommandLine('python train.py --data x.yaml --batch-size 16', { batch: 8 })).toBe('python train.py --data x.yaml --batch-size 8');
  });

  it('each alias of a setting: underscores, dashes, HF and detectron names', () => {
    expect(rewriteCommandLine('python main.py --batch_size 64', { batch: 32 })).toBe('python main.py --batch_size 32');
    expect(rewriteCommandLine('python main.py --batch 64', { batch: 32 })).toBe('python main.py --batch 32');
    expect(rewriteCommandLine('python main.py --num_workers 16', { workers: 4 })).toBe('python main.py --num_workers 4');
    expect(rewriteCommandLine('python main.py --num-workers 16', { workers: 4 })).toBe('python main.py --num-workers 4');
    expect(rewriteCommandLine('python main.py --img_size 800', { imgsz: 640 })).toBe('python main.py --img_size 640');
    expect(rewriteCommandLine('python main.py --imgsz 800', { imgsz: 640 })).toBe('python main.py --imgsz 640');
    expect(rewriteCommandLine('python main.py --accumulate 2', { accumulate: 4 })).toBe('python main.py --accumulate 4');
  });

  it('a longer name is not rewritten through a shorter one (--batch-size is not --batch)', () => {
    expect(rewriteCommandLine('python train.py --batch-size 16 --batch_norm', { batch: 8 })).toBe('python train.py --batch-size 8 --batch_norm');
    expect(rewriteCommandLine('python train.py --img-size 640 --img 640', { imgsz: 512 })).toBe('python train.py --img-size 512 --img 640');
  });

  it("a negative value is the flag's value (YOLOv5 AutoBatch --batch-size -1), the next flag is not", () => {
    expect(rewriteCommandLine('python train.py --batch-size -1 --data x.yaml', { batch: 16 })).toBe('python train.py --batch-size 16 --data x.yaml');
    expect(rewriteCommandLine('python train.py --batch-size --data x.yaml', { batch: 16 })).toBe('python train.py --batch-size 16 --data x.yaml');
  });

  it('yolo `key=value` in place; workers appended when absent under the flag each CLI defines (yolo and YOLOv5 default to 8)', () => {
    expect(rw('yolo detect train data=data.yaml batch=-1 workers=12 single_cls=true', { workers: 4, batch: 64 })).toBe(
      'yolo detect train data=data.yaml batch=64 workers=4 single_cls=true',
    );
    expect(rw('yolo detect train data=data.yaml imgsz=640', { workers: 4 })).toBe('yolo detect train data=data.yaml imgsz=640 workers=4');
    expect(rw('python train.py --data x.yaml', { workers: 2 }, 'yolov5')).toBe('python train.py --data x.yaml --workers 2');
  });

  it('key=value workers only for the yolo command itself; no workers flag written for a value that is not a count', () => {
    expect(rw('xyolo train.py --data x.yaml', { workers: 2 }, 'yolov5')).toBeUndefined();
    expect(rw('yolo detect train data=x.yaml', { workers: false })).toBeUndefined();
  });

  it('workers are not appended where the tool is unknown (its flag name is a guess)', () => {
    expect(rewriteCommandLine('python finetune.py --data x.yaml', { workers: 2 })).toBeUndefined();
    expect(rewriteCommandLine('python mytrain.pyx --data x.yaml', { workers: 2 })).toBeUndefined();
    expect(rewriteCommandLine('python run.py --yolo x', { workers: 2 })).toBeUndefined();
  });

  it('gradient accumulation is added for the HF Trainer only', () => {
    expect(rw('python run.py --per_device_train_batch_size 16', { batch: 8, accumulate: 2 }, 'hf-trainer')).toBe(
      'python run.py --per_device_train_batch_size 8 --gradient_accumulation_steps 2',
    );
    expect(rw('python run.py --per_device_train_batch_size 16 --gradient_accumulation_steps 2', { batch: 8, accumulate: 4 }, 'hf-trainer')).toBe(
      'python run.py --per_device_train_batch_size 8 --gradient_accumulation_steps 4',
    );
    // Only accumulation is appended: a setting the HF command lacks otherwise is left alone.
    expect(rw('python run.py --per_device_train_batch_size 16', { cache: false, imgsz: 512 }, 'hf-trainer')).toBeUndefined();
    // YOLOv5 accumulates to a nominal batch of 64 by itself.
    expect(rw(YOLOV5, { batch: 8, accumulate: 2 }, 'yolov5')).toBe('python train.py --img 1280 --batch-size 8 --data x.yaml');
  });

  it('cache: --cache [ram|disk] is removed, cache=ram becomes cache=False; true writes the bare flag or True', () => {
    expect(rewriteCommandLine('python train.py --cache --nosave', { cache: false })).toBe('python train.py --nosave');
    expect(rewriteCommandLine('python train.py --cache ram --nosave', { cache: false })).toBe('python train.py --nosave');
    expect(rewriteCommandLine('python train.py --data x.yaml --cache', { cache: false })).toBe('python train.py --data x.yaml');
    expect(rewriteCommandLine('yolo train data=x.yaml cache=ram', { cache: false })).toBe('yolo train data=x.yaml cache=False');
    expect(rewriteCommandLine('python train.py --cache ram', { cache: true })).toBe('python train.py --cache');
    expect(rewriteCommandLine('yolo train data=x.yaml cache=ram', { cache: true })).toBe('yolo train data=x.yaml cache=True');
  });

  it('settings it has no flag for are ignored', () => {
    expect(rewriteCommandLine(YOLOV5, { epochs: 10 })).toBeUndefined();
    expect(rewriteCommandLine(YOLOV5, { epochs: 10, batch: 8 })).toBe('python train.py --img 1280 --batch-size 8 --data x.yaml');
  });
});

describe('rewriteCommandLine: an unchanged command is not a correction', () => {
  it('the command already has the value (any spelling of it): undefined, not the same command as "corrected"', () => {
    expect(rewriteCommandLine(YOLOV5, { batch: 16 })).toBeUndefined();
    expect(rewriteCommandLine('python train.py --batch-size=16 --img 640', { batch: 16 })).toBeUndefined();
    expect(rewriteCommandLine('yolo train data=x.yaml workers=4', { workers: 4 })).toBeUndefined();
    expect(rewriteCommandLine('yolo train data=x.yaml cache=false', { cache: false })).toBeUndefined();
    expect(rewriteCommandLine('yolo train data=x.yaml cache=True', { cache: true })).toBeUndefined();
    expect(rewriteCommandLine('python train.py --cache', { cache: true })).toBeUndefined();
  });

  it('a setting the command does not name, with no flag to append: undefined', () => {
    expect(rewriteCommandLine('python train.py --data x.yaml', { cache: false })).toBeUndefined();
    expect(rewriteCommandLine('python train.py --data x.yaml', { batch: 8, accumulate: 2 })).toBeUndefined();
    expect(rewriteCommandLine('python run.py --per_device_train_batch_size 8', { accumulate: 1 })).toBeUndefined();
  });

  it('only the changed part differs, whatever the spacing of the paste', () => {
    expect(rewriteCommandLine('  python train.py  --batch-size 16   --img 640 ', { batch: 8 })).toBe('python train.py --batch-size 8 --img 640');
    expect(rewriteCommandLine('  python train.py  --batch-size 16   --img 640 ', { batch: 16 })).toBeUndefined();
  });
});
