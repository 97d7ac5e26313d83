// Commands from the tool's own CLI (issue 23 item 4): a rewritten command only changes or adds flags the
// script's parser defines (knowledge/tools.yaml `cli`, taken from each tool's argparse or docs), keeps batch
// and accumulation together, reads quoted values, leaves a launcher's flags alone, and is left out where a
// resumed run ignores the flags. Variants written from the principle, and every rewritten command the
// diagnosis produces over test/fixtures parsed under its tools' flag lists.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rewriteCommandLine } from '../../src/diagnose/fixes/command-line.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { diagnose } from '../../src/diagnose/diagnose.js';
import { extractSettings } from '../../src/diagnose/settings.js';
import { defines, flagOf, flagsIn, parseCommand, undefinedFlags } from '../../src/diagnose/tool-cli.js';

const base = await loadRuleBase();
const clis = base.tools!.clis;
const rw = (command: string, changes: Record<string, number | boolean>, tool?: string) =>
  rewriteCommandLine(command, changes, {}, parseCommand(command, clis, tool));

describe('parseCommand: launcher, script and the parser that reads the script', () => {
  it.each([
    ['torchrun --nproc_per_node 2 --master-port=29501 train.py --batch-size 16', 'yolov5', 'torchrun', 'train.py', 'yolov5'],
    ['python -m torch.distributed.run --nproc-per-node 4 --standalone train.py --batch-size 16', 'yolov5', 'torchrun', 'train.py', 'yolov5'],
    ['CUDA_VISIBLE_DEVICES=0,1 deepspeed --num_gpus 2 src/train_bash.py --stage sft', 'deepspeed', 'deepspeed', 'src/train_bash.py', 'llamafactory'],
    [
      'accelerate launch --multi_gpu --mixed_precision fp16 train_text_to_image.py --train_batch_size 4',
      undefined,
      'accelerate',
      'train_text_to_image.py',
      'diffusers',
    ],
    [
      'python3 -u examples/flax/language-modeling/run_clm_flax.py --per_device_train_batch_size 8',
      'hf-trainer',
      undefined,
      'examples/flax/language-modeling/run_clm_flax.py',
      'hf-flax-examples',
    ],
    ['python run_clm_no_trainer.py --per_device_train_batch_size 8', undefined, undefined, 'run_clm_no_trainer.py', 'hf-no-trainer-examples'],
    ['python run_clm.py --per_device_train_batch_size 8', undefined, undefined, 'run_clm.py', 'hf-trainer'],
    ['accelerate launch sdxl_train_network.py --train_batch_size 2', undefined, 'accelerate', 'sdxl_train_network.py', 'kohya-sd-scripts'],
    ['yolo detect train data=x.yaml batch=16', undefined, undefined, 'yolo', 'ultralytics'],
  ])('%s', (command, tool, launcher, script, cli) => {
    const p = parseCommand(command, clis, tool);
    expect(p.launcher?.tool).toBe(launcher);
    expect(p.script).toBe(script);
    expect(p.cli?.tool).toBe(cli);
  });

  it("a generic script name is a tool's only when the log was written by that tool", () => {
    expect(parseCommand('python train.py --batch-size 16', clis, 'yolov5').cli?.tool).toBe('yolov5');
    expect(parseCommand('python train.py --batch-size 16', clis, 'timm').cli?.tool).toBe('timm');
    expect(parseCommand('python train.py --batch-size 16', clis, undefined).cli).toBeUndefined();
    expect(parseCommand('python detect.py --batch-size 16', clis, 'yolov5').cli).toBeUndefined();
  });

  it('flags outside a complete parser are reported; an argparse prefix (--batch for --batch-size) is not', () => {
    expect(undefinedFlags(parseCommand('python train.py --img 640 --batch 64 --amp', clis, 'yolov5'))).toEqual(['--amp']);
    expect(undefinedFlags(parseCommand('deepspeed --num_gpus 2 --gpus 2 x.py', clis))).toEqual(['--gpus']);
    expect(undefinedFlags(parseCommand('torchrun --nproc-per-node 2 --nproc_per_node 2 train.py --img 640', clis, 'yolov5'))).toEqual([]);
    expect(defines(clis.find((c) => c.tool === 'yolov5')!.cli, '--im')).toBe(false); // ambiguous: --img, --imgsz, --img-size, --image-weights
    expect(flagOf('-1')).toBeUndefined();
    expect(flagOf('--lr=1e-4')).toBe('--lr');
  });
});

describe('rewritten commands use only the flags the script defines', () => {
  it('no accumulation flag is added to a script whose parser has none (Flax examples, YOLOv5, an unknown script)', () => {
    expect(rw('python run_clm_flax.py --per_device_train_batch_size 16 --do_train', { batch: 8, accumulate: 2 }, 'hf-trainer')).toBe(
      'python run_clm_flax.py --per_device_train_batch_size 8 --do_train',
    );
    expect(rw('python train.py --img 640 --batch-size 32', { batch: 16, accumulate: 2 }, 'yolov5')).toBe('python train.py --img 640 --batch-size 16');
    expect(rw('python finetune.py --per_device_train_batch_size 16', { batch: 8, accumulate: 2 })).toBe('python finetune.py --per_device_train_batch_size 8');
    // A script whose parser has it gets it.
    expect(rw('python run_clm_no_trainer.py --per_device_train_batch_size 16', { batch: 8, accumulate: 2 })).toBe(
      'python run_clm_no_trainer.py --per_device_train_batch_size 8 --gradient_accumulation_steps 2',
    );
    expect(rw('accelerate launch train_network.py --train_batch_size 4', { batch: 2, accumulate: 2 })).toBe(
      'accelerate launch train_network.py --train_batch_size 2 --gradient_accumulation_steps 2',
    );
  });

  it('batch and accumulation change together: no stale batch flag beside a rewritten accumulation', () => {
    expect(rw('accelerate launch train_dreambooth_lora.py --train_batch_size=2 --gradient_accumulation_steps=4', { batch: 1, accumulate: 8 })).toBe(
      'accelerate launch train_dreambooth_lora.py --train_batch_size=1 --gradient_accumulation_steps=8',
    );
    expect(rw('python sdxl_train.py --train_batch_size 8 --gradient_accumulation_steps 1', { batch: 4, accumulate: 2 })).toBe(
      'python sdxl_train.py --train_batch_size 4 --gradient_accumulation_steps 2',
    );
    // The batch flag of an unknown script is not recognised: its accumulation is not changed alone.
    expect(rw('python my_train.py --bsz 8 --gradient_accumulation_steps 2', { batch: 4, accumulate: 4 })).toBeUndefined();
    // Every alias of the batch the parser defines is changed, not only the first.
    expect(rw('python run_glue.py --per_gpu_train_batch_size 16 --per_device_train_batch_size 16', { batch: 8, accumulate: 2 })).toBe(
      'python run_glue.py --per_gpu_train_batch_size 8 --per_device_train_batch_size 8 --gradient_accumulation_steps 2',
    );
    // The eval batch is its own setting: a training batch change leaves it as it is.
    expect(rw('python run_clm.py --per_device_train_batch_size 16 --per_device_eval_batch_size 16', { batch: 8, accumulate: 2 })).toBe(
      'python run_clm.py --per_device_train_batch_size 8 --per_device_eval_batch_size 16 --gradient_accumulation_steps 2',
    );
  });

  it("a launcher's flags are the launcher's: its --gradient_accumulation_steps / --mixed_precision are left alone", () => {
    expect(rw('accelerate launch --gradient_accumulation_steps 2 train_text_to_image.py --train_batch_size 4', { batch: 2, accumulate: 2 })).toBe(
      'accelerate launch --gradient_accumulation_steps 2 train_text_to_image.py --train_batch_size 2 --gradient_accumulation_steps 2',
    );
    expect(rw('torchrun --nproc_per_node 2 train.py --batch-size 32 --workers 8', { workers: 2 }, 'yolov5')).toBe(
      'torchrun --nproc_per_node 2 train.py --batch-size 32 --workers 2',
    );
    expect(rw('deepspeed --num_gpus 8 --batch_size 4 train.py --batch_size 4', { batch: 2 })).toBe(
      'deepspeed --num_gpus 8 --batch_size 4 train.py --batch_size 2',
    );
  });

  it('a resumed run that reloads its saved options gets no command for the settings it ignores', () => {
    expect(rw('python train.py --resume --batch-size 16', { batch: 8 }, 'yolov5')).toBeUndefined();
    expect(rw('python train.py --resume runs/train/exp/weights/last.pt', { batch: 8 }, 'yolov5')).toBeUndefined();
    expect(rw('python train.py --resume runs/train/exp/weights/last.pt --workers 8', { workers: 2 }, 'yolov5')).toBeUndefined();
    // Ultralytics takes imgsz, batch and device from a resumed command (check_resume), nothing else.
    expect(rw('yolo train resume model=last.pt batch=16 workers=8', { batch: 8, workers: 2 })).toBe('yolo train resume model=last.pt batch=8 workers=8');
    expect(rw('yolo train resume=True model=last.pt workers=8', { workers: 2 })).toBeUndefined();
    // Not resumed: written as usual; HF's resume_from_checkpoint takes a new batch.
    expect(rw('python train.py --batch-size 16', { batch: 8 }, 'yolov5')).toBe('python train.py --batch-size 8');
    expect(rw('python run_clm.py --resume_from_checkpoint out/checkpoint-500 --per_device_train_batch_size 4', { batch: 2, accumulate: 2 })).toBe(
      'python run_clm.py --resume_from_checkpoint out/checkpoint-500 --per_device_train_batch_size 2 --gradient_accumulation_steps 2',
    );
  });

  it('quoted values are read as the setting and written back quoted', () => {
    expect(extractSettings('python train.py --batch-size="256" --workers=\'4\'\n').run.batch).toBe(256);
    expect(extractSettings("accelerate launch t.py --train_batch_size='3'\n").run.batch).toBe(3);
    expect(extractSettings('python train.py --per_device_train_batch_size "12"\n').run.batch).toBe(12);
    expect(rw('accelerate launch train_dreambooth.py --train_batch_size="4"', { batch: 2 })).toBe(
      'accelerate launch train_dreambooth.py --train_batch_size="2"',
    );
  });
});

describe('a command its own tools do not parse is not rewritten', () => {
  // Principle: a corrected command must parse under its tools' flag lists; when the paste's command already names a flag
  // its launcher does not define (a paste cut inside "--master_addr", a typo), the rewrite cannot be checked, so the fix
  // gives no command (its text still says what to change). Synthetic pastes; the real case is blind14/7748's torchrun line.
  const oom =
    'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.11 GiB memory in use. Of the allocated memory 75.20 GiB is allocated by PyTorch, and 1.40 GiB is reserved by PyTorch but unallocated.';
  const commands = (cmd: string) =>
    diagnose(`$ ${cmd}\n  File "train.py", line 10, in <module>\n    loss.backward()\n${oom}\n`, base).diagnoses[0]?.fixes.flatMap((f) =>
      f.command ? [f.command] : [],
    );
  it('torchrun with a flag torchrun does not define: no command (synthetic)', () => {
    expect(commands('torchrun --master --nproc_per_node 8 train.py --per_device_train_batch_size 8')).toEqual([]);
    expect(commands('torchrun --nproc-per-node 8 --mastr_port 29500 train.py --per_device_train_batch_size 8')).toEqual([]);
  });
  it('the same command with only defined flags is rewritten (synthetic near miss)', () => {
    expect(commands('torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 8')).toContain(
      'torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 4 --gradient_accumulation_steps 2',
    );
  });
});

// Every log under test/fixtures except a blind split under construction, which only its builder reads.
function fixtureLogs(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'blind2') continue;
    if (statSync(path).isDirectory()) fixtureLogs(path, out);
    else if (/\.(?:log|txt)$/.test(name)) out.push(path);
  }
  return out;
}

describe('every rewritten command over the test corpus parses under its tools', () => {
  it('launcher and script flags are defined by their parsers; a flag is added only where the parser is known and defines it', { timeout: 300_000 }, () => {
    const root = new URL('../fixtures', import.meta.url).pathname;
    let rewritten = 0;
    const problems: string[] = [];
    for (const file of fixtureLogs(root)) {
      const result = diagnose(readFileSync(file, 'utf8'), base);
      for (const d of result.diagnoses) {
        const original = d.incident.run.commandLine;
        for (const fix of d.fixes) {
          if (!fix.command || !original || fix.command.startsWith('docker ')) continue;
          rewritten++;
          const where = `${file.slice(root.length + 1)} (${d.rule}): ${fix.command}`;
          const before = parseCommand(original, base.tools!.clis, d.incident.run.tool);
          const after = parseCommand(fix.command, base.tools!.clis, d.incident.run.tool);
          expect(after.script, where).toBe(before.script);
          for (const f of undefinedFlags(after)) problems.push(`${where}: ${f} is not defined`);
          const keyed = after.cli?.cli.keyed;
          const had = new Set(flagsIn(before.words, keyed));
          for (const f of flagsIn(after.words, keyed)) {
            if (had.has(f)) continue;
            if (!after.cli || !defines(after.cli.cli, f)) problems.push(`${where}: ${f} added without a parser that defines it`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(rewritten).toBeGreaterThanOrEqual(5);
  });
});
