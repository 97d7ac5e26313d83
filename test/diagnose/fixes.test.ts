// Fix arithmetic with exact expected values, and fixes computed end to end from real logs.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { accumulationFor, fewerWorkers, fixedBatchForAutobatch, smallerBatch, smallerImgsz, workersForRam } from '../../src/diagnose/fixes/arithmetic.js';
import { rewriteCommandLine } from '../../src/diagnose/fixes/command-line.js';
import { parseCommand } from '../../src/diagnose/tool-cli.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { diagnose } from '../../src/diagnose/diagnose.js';

const base = await loadRuleBase();
const rw = (command: string, changes: Record<string, number>, tool?: string) =>
  rewriteCommandLine(command, changes, {}, parseCommand(command, base.tools!.clis, tool));
const evalLog = (name: string) => readFileSync(new URL(`../fixtures/eval-dev/${name}`, import.meta.url), 'utf8');

describe('batch arithmetic', () => {
  it('halves when the message shows a small shortfall', () => {
    expect(smallerBatch(16, { allocatedMiB: 6267, freeMiB: 12.31, triedAllocMiB: 16 })).toBe(8);
    expect(accumulationFor(16, 8)).toBe(2);
  });
  it('goes below half when the request dwarfs what is free', () => {
    // 4 GiB allocated, 100 MiB free, 8 GiB requested: about a third of the memory fits.
    expect(smallerBatch(32, { allocatedMiB: 4096, freeMiB: 100, triedAllocMiB: 8192 })).toBe(9);
    expect(accumulationFor(32, 9)).toBe(4);
  });
  it('never goes below 1', () => {
    expect(smallerBatch(2, { allocatedMiB: 100, freeMiB: 0, triedAllocMiB: 100000 })).toBe(1);
    expect(smallerBatch(1, {})).toBe(1);
  });
  it('keeps an existing accumulation in the effective batch', () => {
    expect(accumulationFor(16, 8, 4)).toBe(8);
  });
  it('replaces AutoBatch with a fixed power of two under half its pick', () => {
    expect(fixedBatchForAutobatch(133)).toBe(64);
    expect(fixedBatchForAutobatch(undefined)).toBe(16);
  });
});

describe('workers and imgsz arithmetic (seed 002 and 001)', () => {
  it('maps host RAM to the low end of the seed table', () => {
    expect(workersForRam(15.3)).toBe(2);
    expect(workersForRam(31)).toBe(4);
    expect(workersForRam(64)).toBe(8);
    expect(workersForRam(256)).toBe(12);
  });
  it('workers=12 -> 4 on a 31 GB host, and 12 -> 4 when RAM is unknown', () => {
    expect(fewerWorkers(12, 31)).toBe(4);
    expect(fewerWorkers(12, undefined)).toBe(4);
    expect(fewerWorkers(8, 15.3)).toBe(2);
    expect(fewerWorkers(2, 15.3)).toBe(1);
  });
  it('steps imgsz through intermediate sizes', () => {
    expect(smallerImgsz(1280)).toBe(1024);
    expect(smallerImgsz(1024)).toBe(800);
    expect(smallerImgsz(800)).toBe(640);
  });
});

describe('command line rewriting', () => {
  it('rewrites argparse flags in place', () => {
    expect(rewriteCommandLine('python train.py --img 1280 --batch-size 16 --data x.yaml', { batch: 8, accumulate: 2 })).toBe(
      'python train.py --img 1280 --batch-size 8 --data x.yaml',
    );
  });
  it('rewrites yolo key=value arguments and appends workers', () => {
    expect(rewriteCommandLine('yolo detect train data=data.yaml batch=-1 workers=12 single_cls=true', { workers: 4 })).toBe(
      'yolo detect train data=data.yaml batch=-1 workers=4 single_cls=true',
    );
    expect(rw('yolo detect train data=data.yaml imgsz=640', { workers: 4 })).toBe('yolo detect train data=data.yaml imgsz=640 workers=4');
  });
  it('adds gradient accumulation for the HF Trainer', () => {
    expect(rw('python run.py --per_device_train_batch_size 16', { batch: 8, accumulate: 2 }, 'hf-trainer')).toBe(
      'python run.py --per_device_train_batch_size 8 --gradient_accumulation_steps 2',
    );
  });
});

describe('fixes computed from real logs', () => {
  it('yolov5 #2510: batch 16 -> 8, accumulate 2, with the corrected command', () => {
    const [d] = diagnose(evalLog('003-cuda_oom.log'), base).diagnoses;
    expect(d.fixes[0].changes).toEqual({ batch: 8, accumulate: 2 });
    expect(d.fixes[0].command).toContain('--batch-size 8');
  });
  it('an OOM where another process holds the GPU says so first, not "halve the batch"', () => {
    const [d] = diagnose(evalLog('046-cuda_oom.log'), base).diagnoses;
    expect(d.fixes[0].kind).toBe('free_other_processes');
    expect(d.fixes[0].summary).toMatch(/12\.\d\d GiB/);
  });
  it('a 1936 GiB request is called a bug, and no fix shrinks the batch', () => {
    const [d] = diagnose(evalLog('049-cuda_oom.log'), base).diagnoses;
    expect(d.rule).toBe('cuda-oom-absurd-request');
    expect(d.fixes.some((f) => 'batch' in f.changes)).toBe(false);
  });
  it('a 16 EiB request and PyTorch 2.1\'s "total capacty" typo are still read as absurd', () => {
    const huge =
      'RuntimeError: CUDA out of memory. Tried to allocate 17179869183.95 GiB (GPU 0; 11.17 GiB total capacity; 2.15 GiB already allocated; 7.62 GiB free; 3.02 GiB reserved in total by PyTorch)';
    expect(diagnose(huge, base).diagnoses[0].rule).toBe('cuda-oom-absurd-request');
    const typo =
      'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 55.00 GiB. GPU 0 has a total capacty of 11.76 GiB of which 9.21 GiB is free.';
    expect(diagnose(typo, base).diagnoses[0].rule).toBe('cuda-oom-absurd-request');
  });
  it('an NCCL watchdog timeout names the rank that fell behind, from the SeqNums', () => {
    const [d] = diagnose(evalLog('018-nccl_or_distributed.log'), base).diagnoses;
    expect(d.fixes[0].summary).toMatch(/^Rank 7 is at SeqNum 64088 while rank 0 reached 96125/);
    expect(d.fixes.some((f) => 'batch' in f.changes)).toBe(false);
  });
  it('a capacity that contradicts the GPU named in the same log is called a wrong device, not a batch to halve', () => {
    const log = [
      'YOLOv5 🚀 v7.0-72 Python-3.10.9 torch-1.13.1+cu117 CUDA:0 (NVIDIA A100-SXM4-80GB, 81251MiB)',
      'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 9.77 GiB total capacity; 7.10 GiB already allocated; 1.02 GiB free; 7.40 GiB reserved in total by PyTorch)',
    ].join('\n');
    const [d] = diagnose(log, base).diagnoses;
    expect(d.fixes[0].kind).toBe('wrong_device');
    expect(d.fixes[0].summary).toMatch(/9\.77 GiB total capacity but the log names a GPU with 79\.35 GiB/);
  });
  it('fragmentation gets expandable_segments first (mlverse/torch#1222: a GiB-scale idle cache, nothing free on the device)', () => {
    const log = readFileSync(new URL('../../knowledge/cuda-oom-fragmentation/match/mlverse-torch-1222.log', import.meta.url), 'utf8');
    const [d] = diagnose(log, base).diagnoses;
    expect(d.fixes[0].env).toEqual({ PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' });
  });
  it('2.35 GiB free on the device against a 20 MiB request is not capacity, not fragmentation: no batch, no allocator setting first', () => {
    const [d] = diagnose(evalLog('071-fragmentation.log'), base).diagnoses;
    expect(d.incident.holder.verdict).toBe('not_capacity');
    expect(d.fixes[0].summary).toMatch(/^Not a full card: the device reports 2\.35 GiB free/);
    expect(d.fixes[0].changes.batch).toBeUndefined();
  });
  it('the Ultralytics dump with workers=8 on 15.3 GB RAM gets workers 8 -> 2 and cache=False', () => {
    const [d] = diagnose(evalLog('064-host_oom_killed.log'), base).diagnoses;
    expect(d.fixes[0].changes).toEqual({ workers: 2 });
    expect(d.fixes.find((f) => f.kind === 'drop_ram_cache')?.changes).toEqual({ cache: false });
  });
  it('seed 002: single_cls, workers=12, batch=-1, Killed -> workers 4 and a fixed batch', () => {
    const log = [
      'yolo detect train data=data.yaml model=yolo11n.pt epochs=200 imgsz=640 patience=25 batch=-1 plots=true workers=12 single_cls=true',
      'AutoBatch: Using batch-size 133 for CUDA:0 16.7G/23.6G (71%) ✅',
      '      1/200      16.7G      1.234      2.345      1.456        133        640:  12%|█▏        | 52/430 [00:41<04:59,  1.26it/s]',
      'Killed',
    ].join('\n');
    const [d] = diagnose(log, base).diagnoses;
    expect(d.category).toBe('host_oom_killed');
    expect(d.fixes[0].changes).toEqual({ workers: 4 });
    expect(d.fixes[0].command).toContain('workers=4');
    expect(d.fixes.find((f) => f.kind === 'fixed_autobatch')?.changes).toEqual({ batch: 64 });
  });
});
