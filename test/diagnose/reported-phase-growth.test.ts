// Principles (issue 23), each with synthetic variants written from the principle and checked through the CLI
// (`gpu-doctor diagnose --json`):
// - The phase a report names ("out of memory during validation", "trainer.evaluate() ... runs out of memory",
//   "验证时显存不足") decides the lever when no frame says it: an evaluation OOM gets the evaluation's lever
//   (no_grad for a script's own loop, eval_accumulation_steps for HF Trainer), never the training batch. A
//   failure "after validation" (when training resumes) is not an evaluation OOM.
// - Training epochs done before an evaluation OOM say the step fits; the evaluation's lever still comes first.
// - One evaluation request that is a large share of the card is one huge input (a whole image, a long
//   sequence), not kept graphs: evaluate it in pieces.
// - Growing memory: where the paste shows what is kept (a loss tensor added to a total, outputs appended), the
//   leak fix comes first; otherwise the experiment that finds it (allocated vs reserved, a memory summary or
//   snapshot), never allocator settings first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diagnoseFile, type CaseDiagnosis } from './corpus-case.js';
import { reportedPhase } from '../../src/diagnose/levers/reported-phase.js';
import { readKeptReference } from '../../src/diagnose/levers/growth.js';

const dir = mkdtempSync(join(tmpdir(), 'reported-phase-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
async function first(text: string): Promise<CaseDiagnosis> {
  const file = join(dir, `case-${n++}.log`);
  writeFileSync(file, text);
  const d = await diagnoseFile(file);
  expect(d, 'a diagnosis').toBeDefined();
  return d!;
}
const fixText = (d: CaseDiagnosis) => JSON.stringify(d.fixes[0]);

describe('the phase a report names (levers/reported-phase.ts)', () => {
  it.each([
    ['CUDA out of memory during validation', 'plain'],
    ['The training is fine, but I get an OOM when validating after each epoch.', 'plain'],
    ['RuntimeError: CUDA out of memory in the evaluation loop', 'plain'],
    ['trainer.evaluate() runs out of memory on a large eval set', 'hf'],
    ['验证时显存不足，训练正常', 'plain'],
    ['Out of memory in validation_step with pytorch_lightning 2.1', 'lightning'],
  ])('%s -> eval (%s)', (sentence, loop) => {
    const v = reportedPhase(`${sentence}\n`);
    expect(v?.phase).toBe('eval');
    expect(v?.evalLoop).toBe(loop);
    expect(v?.frame).toContain(sentence.slice(0, 20));
  });

  it.each([
    'Every time after the validation of the first epoch, there is an out of memory error when the second epoch starts',
    'Validation runs fine; the OOM comes in the training step',
    'CUDA out of memory. Tried to allocate 20.00 MiB',
  ])('no evaluation phase: %s', (sentence) => {
    expect(reportedPhase(`${sentence}\n`)).toBeUndefined();
  });

  it('reads what the loop keeps: predictions concatenated on the GPU (Trainer), outputs appended to a list (own loop)', () => {
    expect(reportedPhase('Trainer.evaluate() aggregates predictions on the GPU and runs out of memory\n')?.gathersPredictions).toBe(true);
    const own = reportedPhase('OOM during evaluation\nthe outputs of the model are appended to a list and stay on the GPU\n');
    expect(own?.evalCollects).toBe(true);
  });
});

describe('evaluation OOMs told in words get the evaluation lever through the CLI', () => {
  it.each([
    'CUDA out of memory during validation. Training runs at batch_size 16 without problems.',
    'I get "RuntimeError: CUDA error: out of memory" while validating; training epochs finish.',
    '验证时显存不足（CUDA out of memory），训练的时候没问题',
  ])('a script loop with no no_grad shown: %s', async (text) => {
    const d = await first(`${text}\n`);
    expect(d.category).toBe('cuda_oom');
    expect(fixText(d)).toMatch(/no_grad|inference_mode/);
    expect(d.fixes[0].changes.batch).toBeUndefined();
  });

  it('HF Trainer named: eval_accumulation_steps first, not the training batch', async () => {
    const d = await first('trainer.evaluate() runs out of memory (CUDA out of memory) with per_device_train_batch_size 8\n');
    expect(fixText(d)).toMatch(/eval_accumulation_steps/);
    expect(d.fixes[0].changes.per_device_train_batch_size).toBeUndefined();
  });
});

const SITE = '/opt/conda/lib/python3.10/site-packages';
const frames = (loopFn: string, code: string) =>
  [
    'Traceback (most recent call last):',
    '  File "train.py", line 210, in <module>',
    '    main()',
    '  File "train.py", line 190, in main',
    `    val_loss = ${loopFn}(model, val_loader)`,
    `  File "train.py", line 120, in ${loopFn}`,
    `    ${code}`,
    `  File "${SITE}/torch/nn/modules/module.py", line 1751, in _wrapped_call_impl`,
    '    return self._call_impl(*args, **kwargs)',
  ].join('\n');
const oom = (tried: string, total: string, allocated: string) =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried}. GPU 0 has a total capacity of ${total} of which 120.00 MiB is free. Of the allocated memory ${allocated} is allocated by PyTorch, and 90.00 MiB is reserved by PyTorch but unallocated.`;

describe('evaluation after training epochs, and one huge evaluation input', () => {
  it.each(['It ran out after 5 epochs of training.', 'The crash comes after several epochs.'])(
    'epochs done (%s) before an OOM in validate(): the no_grad lever, not "something grows"',
    async (progress) => {
      const d = await first([progress, frames('validate', 'out = model(x)'), oom('64.00 MiB', '11.76 GiB', '11.10 GiB')].join('\n'));
      expect(fixText(d)).toMatch(/inference_mode|no_grad/);
      expect(d.fixes[0].summary).not.toMatch(/ran out only later|Training ran at these settings/);
    },
  );

  it.each([
    ['4.69 GiB', '11.77 GiB', '11.40 GiB'],
    ['8.67 GiB', '23.70 GiB', '22.90 GiB'],
  ])('one request of %s on %s in evaluation: evaluate the input in pieces, no batch', async (tried, total, allocated) => {
    const d = await first([frames('evaluate', 'pred = model(image)'), oom(tried, total, allocated)].join('\n'));
    expect(d.fixes[0].summary).toMatch(/sliding-window|tiled/);
    expect(d.fixes[0].summary).toMatch(/image size|max length/);
    expect(d.fixes[0].changes.batch).toBeUndefined();
  });

  it('a layer-sized request in the same loop keeps the no_grad lever', async () => {
    const d = await first([frames('evaluate', 'pred = model(image)'), oom('196.00 MiB', '11.77 GiB', '11.10 GiB')].join('\n'));
    expect(d.fixes[0].summary).toMatch(/inference_mode/);
    expect(d.fixes[0].summary).not.toMatch(/sliding-window/);
  });
});

describe('growing memory: the leak fix needs to be shown, else the experiment that finds it (levers/growth.ts)', () => {
  it.each([
    ['        total_loss += loss', true],
    ['    epoch_loss = epoch_loss + loss_g  # for the log', true],
    ['        preds.append(outputs)', true],
    ['I record the losses with += and without .item(), so every state of the loss is stored', true],
    ['        total_loss += loss.item()', false],
    ['        total_loss += float(loss)', false],
    ['GPU memory keeps growing', false],
  ])('%s -> shown: %s', (line, shown) => {
    expect(readKeptReference(`${line}\n`).series.keptReference !== undefined).toBe(shown);
  });

  it.each([
    'GPU memory keeps increasing with every iteration until CUDA out of memory.',
    'The GPU memory usage keeps growing during training and finally OOM on a 24GB card.',
    '训练时显存不断增加，最后 CUDA out of memory',
  ])('reported growth with nothing kept shown: the experiment first (%s)', async (text) => {
    const d = await first(`${text}\n`);
    expect(d.category).toBe('growing_memory_leak');
    expect(d.fixes[0].summary).toMatch(/memory_summary|_record_memory_history/);
    expect(d.fixes[0].summary).toMatch(/\.item\(\)/);
    expect(d.fixes[0].summary).not.toMatch(/expandable_segments/);
    expect(d.fixes[0].changes.batch).toBeUndefined();
  });

  it.each([
    'The memory used by the model is increasing after every iteration, then CUDA out of memory.',
    'GPU memory grows with each epoch and the run dies with an OOM',
    '每个epoch显存都在增加，最后OOM',
  ])('a climb told per step or epoch is growth (%s)', async (text) => {
    const d = await first(`${text}\n`);
    expect(d.category).toBe('growing_memory_leak');
    expect(d.rule).toBe('gpu-memory-growth-reported');
  });

  it('the same words about host RAM are not a GPU growth', async () => {
    const d = await first('The RAM usage is increasing after every epoch until the process is killed\n');
    expect(d.rule).not.toBe('gpu-memory-growth-reported');
  });

  it('reported growth with a loss tensor added to a total in the paste: release it first', async () => {
    const d = await first('GPU memory keeps increasing with every iteration until CUDA out of memory.\n    for x, y in loader:\n        total_loss += loss\n');
    expect(d.fixes[0].summary).toMatch(/loss\.item\(\)/);
    expect(d.fixes[0].summary).not.toMatch(/memory_summary/);
  });
});
