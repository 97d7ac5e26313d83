// The corrected command line (src/diagnose/fixes/command-line.ts) on the branches the mutation run found
// untested (npm run test:mutation -- command-line): a repeated setting, quoted values in every style the
// rewrite reads (argparse flags, yolo/Hydra keys, detectron2's yacs opts), and how a value's quoting is
// kept; and, with the command parsed against knowledge/tools.yaml, which flags may be written (the script's
// parser's, not the launcher's) and what a resumed run still takes. These run in the mutation group in place
// of tool-cli.test.ts, whose every-fixture diagnosis made each mutant wait seconds. Several variants per
// principle, through rewriteCommandLine only.
import { describe, expect, it } from 'vitest';
import { rewriteCommandLine, type AppendSyntax } from '../../src/diagnose/fixes/command-line.js';
import { readTools } from '../../src/diagnose/rule-base.js';
import { parseCommand } from '../../src/diagnose/tool-cli.js';
import { compileTools } from '../../src/diagnose/tools.js';

// Only the tools' CLIs: the rules' folders are not needed to rewrite a command.
const clis = compileTools((await readTools())!).clis;
/** Rewritten as the diagnosis does: the command parsed against the tools' CLIs, with the log's tool. */
const rw = (command: string, changes: Record<string, number | boolean>, tool?: string, append: AppendSyntax = {}) =>
  rewriteCommandLine(command, changes, append, parseCommand(command, clis, tool));

const D2 = 'python tools/train_net.py --config-file c.yaml';

describe('a setting given twice: every occurrence is rewritten (the last one is the one the tool uses)', () => {
  it('detectron2 yacs opts repeated after the config', () => {
    expect(rewriteCommandLine(`${D2} SOLVER.IMS_PER_BATCH 16 SOLVER.BASE_LR 0.02 SOLVER.IMS_PER_BATCH 32`, { batch: 8 })).toBe(
      `${D2} SOLVER.IMS_PER_BATCH 8 SOLVER.BASE_LR 0.02 SOLVER.IMS_PER_BATCH 8`,
    );
    expect(rewriteCommandLine(`${D2} DATALOADER.NUM_WORKERS 8 DATALOADER.NUM_WORKERS 16`, { workers: 4 })).toBe(
      `${D2} DATALOADER.NUM_WORKERS 4 DATALOADER.NUM_WORKERS 4`,
    );
    // The first already has the value: the later one still changes.
    expect(rewriteCommandLine(`${D2} SOLVER.IMS_PER_BATCH 8 SOLVER.IMS_PER_BATCH 32`, { batch: 8 })).toBe(
      `${D2} SOLVER.IMS_PER_BATCH 8 SOLVER.IMS_PER_BATCH 8`,
    );
  });

  it('argparse flags and yolo/Hydra keys repeated', () => {
    expect(rewriteCommandLine('python train.py --batch-size 16 --img 640 --batch-size 32', { batch: 8 })).toBe(
      'python train.py --batch-size 8 --img 640 --batch-size 8',
    );
    expect(rewriteCommandLine('yolo train batch=16 data=x.yaml batch=32', { batch: 8 })).toBe('yolo train batch=8 data=x.yaml batch=8');
    expect(rewriteCommandLine('python train.py data.batch_size=16 data.batch_size=32', { batch: 8 })).toBe(
      'python train.py data.batch_size=8 data.batch_size=8',
    );
  });
});

describe('a quoted value is the value inside its quotes: the same value is no correction', () => {
  it('detectron2 yacs opts with a quoted number equal to the fix', () => {
    expect(rewriteCommandLine(`${D2} SOLVER.IMS_PER_BATCH "16"`, { batch: 16 })).toBeUndefined();
    expect(rewriteCommandLine(`${D2} SOLVER.IMS_PER_BATCH '16' SOLVER.BASE_LR 0.02`, { batch: 16 })).toBeUndefined();
    expect(rewriteCommandLine(`${D2} DATALOADER.NUM_WORKERS "12"`, { workers: 12 })).toBeUndefined();
  });

  it('a quoted number that differs is replaced by the number', () => {
    expect(rewriteCommandLine(`${D2} SOLVER.IMS_PER_BATCH "16"`, { batch: 8 })).toBe(`${D2} SOLVER.IMS_PER_BATCH 8`);
    expect(rewriteCommandLine(`${D2} DATALOADER.NUM_WORKERS '16'`, { workers: 4 })).toBe(`${D2} DATALOADER.NUM_WORKERS 4`);
  });

  it('yolo booleans: quoted, or in any letter case, are the boolean they spell', () => {
    expect(rewriteCommandLine('yolo train data=x.yaml cache="True"', { cache: true })).toBeUndefined();
    expect(rewriteCommandLine("yolo train data=x.yaml cache='False'", { cache: false })).toBeUndefined();
    expect(rewriteCommandLine('yolo train data=x.yaml cache=TRUE', { cache: true })).toBeUndefined();
    expect(rewriteCommandLine('yolo train data=x.yaml cache=FALSE', { cache: false })).toBeUndefined();
    // The other boolean, quoted, is rewritten.
    expect(rewriteCommandLine('yolo train data=x.yaml cache="True"', { cache: false })).toBe('yolo train data=x.yaml cache=False');
    expect(rewriteCommandLine("yolo train data=x.yaml cache='false'", { cache: true })).toBe('yolo train data=x.yaml cache=True');
  });

  it('quotes that do not pair are not quotes around the value', () => {
    expect(rewriteCommandLine(`${D2} SOLVER.IMS_PER_BATCH "16'`, { batch: 16 })).toBe(`${D2} SOLVER.IMS_PER_BATCH 16`);
    expect(rewriteCommandLine(`yolo train data=x.yaml cache="True'`, { cache: true })).toBe('yolo train data=x.yaml cache=True');
  });

  it('only quotes are stripped: a number whose first and last digits match is read whole', () => {
    expect(rewriteCommandLine(`${D2} SOLVER.IMS_PER_BATCH 424`, { batch: 2 })).toBe(`${D2} SOLVER.IMS_PER_BATCH 2`);
    expect(rewriteCommandLine('python train.py --batch-size 484', { batch: 8 })).toBe('python train.py --batch-size 8');
    expect(rewriteCommandLine('yolo train data=x.yaml batch=242', { batch: 4 })).toBe('yolo train data=x.yaml batch=4');
  });
});

describe("the new value keeps the user's quotes only where their value was a quoted literal", () => {
  it('a shell default or Hydra interpolation with quotes inside is replaced by the bare number', () => {
    expect(rewriteCommandLine("python train.py --batch-size=${BS:-'16'} --img 640", { batch: 8 })).toBe('python train.py --batch-size=8 --img 640');
    expect(rewriteCommandLine('python train.py --batch-size ${BS:-"16"}', { batch: 8 })).toBe('python train.py --batch-size 8');
    expect(rewriteCommandLine("python train.py data.batch_size=${oc.env:BATCH,'32'}", { batch: 16 })).toBe('python train.py data.batch_size=16');
  });

  it('a quoted literal keeps its quotes, single or double', () => {
    expect(rewriteCommandLine("python train.py --batch-size='16'", { batch: 8 })).toBe("python train.py --batch-size='8'");
    expect(rewriteCommandLine('yolo train data=x.yaml batch="16"', { batch: 8 })).toBe('yolo train data=x.yaml batch="8"');
  });
});

describe("with the script's parser known, a setting is written under a flag that parser defines", () => {
  it("a missing setting is added under the tool's syntax when the parser defines its flag, else under the parser's own flag", () => {
    expect(rw('python train.py --data x.yaml', { imgsz: 512 }, 'yolov5', { imgsz: '--img ' })).toBe('python train.py --data x.yaml --img 512');
    expect(rw('python train.py --data x.yaml', { imgsz: 512 }, 'yolov5')).toBe('python train.py --data x.yaml --imgsz 512');
    expect(rw('python train.py --data x.yaml', { batch: 8 }, 'yolov5', { batch: '--bs ' })).toBe('python train.py --data x.yaml --batch-size 8');
    expect(rw('yolo train data=x.yaml', { batch: 8 }, undefined, { batch: 'bs=' })).toBe('yolo train data=x.yaml batch=8');
    expect(rw('python train.py --img-size 640', { workers: 2, batch: 8 }, 'timm')).toBe('python train.py --img-size 640 --workers 2 --batch-size 8');
  });

  it('a script no parser is known for gets nothing added, whatever the syntax offered', () => {
    expect(rw('python my_train.py --data x.yaml', { batch: 8 }, undefined, { batch: '--batch-size ' })).toBeUndefined();
    expect(rw('python my_train.py --data x.yaml', { workers: 2, imgsz: 640 })).toBeUndefined();
  });

  it("every alias the parser defines is rewritten, short and long (timm's -b and --batch-size)", () => {
    expect(rw('python train.py --img-size 640 -b 64', { batch: 32 }, 'timm')).toBe('python train.py --img-size 640 -b 32');
    expect(rw('python train.py -b 64 --batch-size 64', { batch: 32 }, 'timm')).toBe('python train.py -b 32 --batch-size 32');
  });

  it('accumulation follows a batch that was added rather than rewritten', () => {
    expect(rw('python run_clm.py --do_train', { batch: 4, accumulate: 4 })).toBe(
      'python run_clm.py --do_train --per_device_train_batch_size 4 --gradient_accumulation_steps 4',
    );
    expect(rw('python run_clm.py --gradient_accumulation_steps 2 --do_train', { batch: 4, accumulate: 4 })).toBe(
      'python run_clm.py --gradient_accumulation_steps 4 --do_train --per_device_train_batch_size 4',
    );
  });

  it("the launcher's part of the command is kept as written", () => {
    expect(rw('torchrun --nproc_per_node 4 train.py --workers 8 --batch-size 32', { batch: 16 }, 'yolov5')).toBe(
      'torchrun --nproc_per_node 4 train.py --workers 8 --batch-size 16',
    );
    expect(rw('deepspeed --num_gpus 2 --batch_size 4 train.py --batch_size 4 --lr 1e-4', { batch: 2 })).toBe(
      'deepspeed --num_gpus 2 --batch_size 4 train.py --batch_size 2 --lr 1e-4',
    );
  });
});

describe('a resumed run that reloads its saved options: only the settings it still takes are written', () => {
  it('YOLOv5 --resume takes none (with or without a checkpoint, under a launcher too)', () => {
    expect(rw('torchrun --nproc_per_node 4 train.py --resume --workers 8', { workers: 2 }, 'yolov5')).toBeUndefined();
    expect(rw('python train.py --batch-size 32 --resume last.pt', { batch: 16 }, 'yolov5')).toBeUndefined();
  });

  it('ultralytics resume takes batch and imgsz only; resume=False, none or 0 is no resume', () => {
    expect(rw('yolo train resume model=last.pt imgsz=640 cache=ram', { imgsz: 512, cache: false })).toBe('yolo train resume model=last.pt imgsz=512 cache=ram');
    expect(rw('yolo train resume=last.pt workers=8', { workers: 2 })).toBeUndefined();
    expect(rw('yolo train resume=False model=x.pt workers=8', { workers: 2 })).toBe('yolo train resume=False model=x.pt workers=2');
    expect(rw('yolo train resume=none model=x.pt workers=8', { workers: 2 })).toBe('yolo train resume=none model=x.pt workers=2');
    expect(rw('yolo train resume=0 model=x.pt workers=8', { workers: 2 })).toBe('yolo train resume=0 model=x.pt workers=2');
  });

  it('a parser without reloaded options (HF resume_from_checkpoint) takes every setting', () => {
    expect(rw('python run_clm.py --resume_from_checkpoint out/checkpoint-9 --per_device_train_batch_size 8', { batch: 4 })).toBe(
      'python run_clm.py --resume_from_checkpoint out/checkpoint-9 --per_device_train_batch_size 4',
    );
  });
});

describe("a setting goes under the parser's own names for it, and only a number is added where the command lacks it", () => {
  it("mixed precision under each parser's name: yolo's amp=, the HF Trainer's --fp16; an unknown script has none", () => {
    expect(rw('yolo train data=x.yaml amp=False', { precision: true })).toBe('yolo train data=x.yaml amp=True');
    expect(rw('python run_clm.py --fp16 --per_device_train_batch_size 8', { precision: false })).toBe('python run_clm.py --per_device_train_batch_size 8');
    expect(rw('python my.py --fp16 --batch_size 8', { precision: false })).toBeUndefined();
  });

  it('yolo keys outside its settings are not rewritten (ultralytics has no accumulate)', () => {
    expect(rw('yolo train data=x.yaml batch=16 accumulate=4', { batch: 8, accumulate: 2 })).toBe('yolo train data=x.yaml batch=8 accumulate=4');
  });

  it('a switch the command does not have is not added (a boolean has no value to append)', () => {
    expect(rw('python train.py --data x.yaml', { cache: false }, 'yolov5')).toBeUndefined();
    expect(rw('python train.py --data x.yaml', { cache: true }, 'yolov5')).toBeUndefined();
    expect(rw('yolo train data=x.yaml', { precision: true })).toBeUndefined();
  });

  it('mmcv --cfg-options workers and Hydra-style accumulation keys are found where the tool is not known', () => {
    expect(rewriteCommandLine('python tools/train.py cfg.py --cfg-options data.workers_per_gpu=8', { workers: 2 })).toBe(
      'python tools/train.py cfg.py --cfg-options data.workers_per_gpu=2',
    );
    expect(rewriteCommandLine('python train.py trainer.gradient_accumulation_steps=2', { accumulate: 4 })).toBe(
      'python train.py trainer.gradient_accumulation_steps=4',
    );
  });

  it('a setting found as a flag is that flag: a key=value word elsewhere (a run tag) is left as written', () => {
    expect(rewriteCommandLine('python train.py --batch_size 32 --tags batch_size=32', { batch: 16 })).toBe(
      'python train.py --batch_size 16 --tags batch_size=32',
    );
    expect(rewriteCommandLine('python train.py --workers 8 --note workers=8', { workers: 2 })).toBe('python train.py --workers 2 --note workers=8');
  });

  it('among Hydra keys, the longest spelling found is the setting; a shorter key under another path is another setting', () => {
    expect(rewriteCommandLine('python train.py data.batch_size=32 sampler.batch=4', { batch: 16 })).toBe('python train.py data.batch_size=16 sampler.batch=4');
    expect(rewriteCommandLine('python train.py trainer.train_batch_size=32 model.batch=4', { batch: 16 })).toBe(
      'python train.py trainer.train_batch_size=16 model.batch=4',
    );
  });
});

describe('a switch written with an explicit value (HfArgumentParser takes `--fp16 False`)', () => {
  it('the value it already spells is no correction; the other value becomes the bare switch', () => {
    expect(rw('python run_clm.py --fp16 False --per_device_train_batch_size 8', { precision: false })).toBeUndefined();
    expect(rw('python run_clm.py --fp16 True --per_device_train_batch_size 8', { precision: true })).toBeUndefined();
    expect(rw('python run_clm.py --fp16 False --per_device_train_batch_size 8', { precision: true })).toBe(
      'python run_clm.py --fp16 --per_device_train_batch_size 8',
    );
  });
});

describe('accumulation changes only with the batch it keeps whole', () => {
  it('not alone where the batch could not be written (the batch flag is one no parser names)', () => {
    expect(rw('python my_train.py --bsz 8 --gradient_accumulation_steps 2', { batch: 4, accumulate: 4 })).toBeUndefined();
    expect(rewriteCommandLine('python x.py --micro_bs 8 --gradient_accumulation_steps 2', { batch: 4, accumulate: 4 })).toBeUndefined();
  });

  it('a fix that changes accumulation alone rewrites it', () => {
    expect(rewriteCommandLine('python x.py --gradient_accumulation_steps 2', { accumulate: 4 })).toBe('python x.py --gradient_accumulation_steps 4');
    expect(rw('python run_clm.py --gradient_accumulation_steps 2 --per_device_train_batch_size 8', { accumulate: 4 })).toBe(
      'python run_clm.py --gradient_accumulation_steps 4 --per_device_train_batch_size 8',
    );
  });
});

describe('ultralytics resume is the resume key itself', () => {
  it('a checkpoint path is a resume, even one that begins like a false value', () => {
    expect(rw('yolo train resume=0416/weights/last.pt workers=8', { workers: 2 })).toBeUndefined();
    expect(rw('yolo train resume=none-baseline/weights/last.pt workers=8', { workers: 2 })).toBeUndefined();
  });

  it("resume= inside another key's value is no resume; a false value in any case is none", () => {
    expect(rw('yolo train model=runs/resume=2/last.pt workers=8', { workers: 2 })).toBe('yolo train model=runs/resume=2/last.pt workers=2');
    expect(rw('yolo train resume=FALSE workers=8', { workers: 2 })).toBe('yolo train resume=FALSE workers=2');
  });
});

describe('an added setting joins an existing --cfg-options only when it is a --cfg-options key', () => {
  it('a --cfg-options key joins the one already there; any other flag goes at the end', () => {
    expect(
      rewriteCommandLine('python tools/train.py c.py --cfg-options a=1 --work-dir w', { batch: 2 }, { batch: '--cfg-options data.samples_per_gpu=' }),
    ).toBe('python tools/train.py c.py --cfg-options data.samples_per_gpu=2 a=1 --work-dir w');
    expect(rewriteCommandLine('python tools/train.py c.py --cfg-options a=1 --work-dir w', { batch: 2 }, { batch: '--batch-size ' })).toBe(
      'python tools/train.py c.py --cfg-options a=1 --work-dir w --batch-size 2',
    );
    expect(rewriteCommandLine('python tools/train.py c.py --work-dir w', { batch: 2 }, { batch: '--cfg-options data.samples_per_gpu=' })).toBe(
      'python tools/train.py c.py --work-dir w --cfg-options data.samples_per_gpu=2',
    );
  });
});

describe("argparse's abbreviations (allow_abbrev): a unique prefix of a long option is that option, so it is rewritten too", () => {
  it('YOLOv5 --batch beside --batch-size: both carry the batch (the last one given wins), both change', () => {
    expect(rw('python train.py --batch-size 64 --batch 64 --data x.yaml', { batch: 32 }, 'yolov5')).toBe(
      'python train.py --batch-size 32 --batch 32 --data x.yaml',
    );
    expect(rw('python train.py --batch=64 --data x.yaml', { batch: 16 }, 'yolov5')).toBe('python train.py --batch=16 --data x.yaml');
    expect(rw('python train.py --batch-s 64 --workers 8', { batch: 16, workers: 2 }, 'yolov5')).toBe('python train.py --batch-s 16 --workers 2');
    // --work is an unambiguous prefix of --workers only.
    expect(rw('python train.py --work 16 --batch 8', { workers: 4 }, 'yolov5')).toBe('python train.py --work 4 --batch 8');
  });

  it('an exact flag is never read as a prefix of a longer one, and an ambiguous prefix is left alone', () => {
    // --img is its own flag in YOLOv5 (an alias of --imgsz), so a batch change leaves it alone.
    expect(rw('python train.py --img 640 --batch 64', { batch: 32 }, 'yolov5')).toBe('python train.py --img 640 --batch 32');
    // --b could be --batch-size, --bucket or --bbox_interval: not the batch's flag, so it is not rewritten as one.
    expect(rw('python train.py --b 64 --batch-size 64', { batch: 32 }, 'yolov5')).toBe('python train.py --b 64 --batch-size 32');
  });
});
