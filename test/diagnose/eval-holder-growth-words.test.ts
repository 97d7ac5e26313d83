// Principles (issue 23) for the evaluation, another-holder and growth classes, where the engine answered nothing or
// "cannot tell" while the paste holds the evidence an engineer reads:
// - an evaluation named as the failure's subject or place ("Validation out of memory", '"out of memory" during
//   validation', "runs out of memory when computing eval score") is a GPU OOM in evaluation, with that phase's lever;
// - the evaluation read from frames and lines in each framework's fixed format: detectron2's inference_on_dataset, a
//   script's own inference loop, the line a frame ran calling trainer.evaluate() / trainer.validate(), Lightning's
//   Testing / Predicting bars, tqdm bars an evaluation loop names, mmengine's Epoch(val) lines; a training progress line
//   after them means the run was training again;
// - a memory figure larger than any accelerator (Paddle's "127.99 TB allocated") is a wrapped counter, not memory this
//   process holds: a tiny request with nothing available is then a card full before the job began;
// - a memory leak named beside what holds GPU memory (GPU, autograd, validation_step, loss tensors) is growth; a
//   question after another sentence ("Is it due to memory leak?") and host RAM are not.
// Synthetic variants written from each principle beside the real threads (phase4, eval5, fresh, blind, unseen), all
// through the CLI (`gpu-doctor diagnose --json`).
import { describe, expect, it } from 'vitest';
import { firstOfCase, type CaseDiagnosis, diagnosePaste } from './corpus-case.js';

// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
async function diagnosed(text: string): Promise<CaseDiagnosis> {
  const d = await diagnoseText(text);
  expect(d, 'a diagnosis').toBeDefined();
  return d!;
}
const first = (d: CaseDiagnosis) => d.fixes[0].summary;
const noBatchChange = (d: CaseDiagnosis) => expect(d.fixes.every((f) => f.changes.batch === undefined)).toBe(true);

describe('an evaluation named as the failure in words is a GPU OOM in evaluation, with its lever', () => {
  it.each([
    ['the title only', 'Validation out of memory\nTraining is good, but in validation each forward uses new memory.'],
    ['a sentence', 'Training runs for an epoch without trouble.\nThe validation would meet out of memory problem every time.'],
    ['quoted, then placed', '"out of memory" during validation\nValidation runs after every epoch.'],
    ['evaluation hits OOM', 'Evaluation hits OOM on the larger test split\nmodel.eval() is called before the loop.'],
    ['running into it while evaluating', 'My script ran into out of memory while evaluating the checkpoint\nIt loads fine.'],
  ])('%s: cuda_oom in evaluation, inference_mode / no_grad first, no batch change', async (_name, text) => {
    const d = await diagnosed(text);
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
    noBatchChange(d);
  });

  it("HF Trainer's gathering named in words: eval_accumulation_steps first", async () => {
    const d = await diagnosed(
      'Trainer runs out of memory when computing eval score\nThe Trainer keeps every batch of logits (nested_concat) until compute_metrics runs.',
    );
    expect(d.category).toBe('cuda_oom');
    expect(d.facts).toMatchObject({ phase: 'eval', evalLoop: 'hf' });
    expect(first(d)).toMatch(/eval_accumulation_steps/);
    noBatchChange(d);
  });

  it.each([
    ['avoiding it', 'How to avoid out of memory during evaluation?\nIs there a setting for it?'],
    ['a setting that prevents it', 'Feature: a flag so that evaluation does not use so much memory\nsuggestion only'],
  ])('no failure told (%s): no cuda-oom diagnosis', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.rule).not.toBe('cuda-oom');
  });

  it.each([
    ['phase4', '1703', /no_grad|inference_mode/],
    ['phase4', '1706', /eval_accumulation_steps/],
    ['eval5', '2003', /no_grad|inference_mode/],
  ])('real thread %s/%s: the evaluation lever first', async (group, num, lever) => {
    const d = (await firstOfCase(group, num))!;
    expect(d.category).toBe('cuda_oom');
    expect(d.facts.phase).toBe('eval');
    expect(first(d)).toMatch(lever);
  });
});

const SITE = '/opt/conda/lib/python3.10/site-packages';
const frame = (file: string, fn: string, code = 'return fn(*args, **kwargs)') => [`  File "${file}", line 311, in ${fn}`, `    ${code}`];
const tb = (frames: string[][], error: string) => ['Traceback (most recent call last):', ...frames.flat(), error].join('\n');
const OOM =
  'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free. Of the allocated memory 21.80 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.';
const FORWARD = [frame(`${SITE}/torch/nn/modules/module.py`, '_call_impl'), frame('model/net.py', 'forward', 'x = self.backbone(x)')];

describe('the evaluation read from frames in fixed formats', () => {
  it.each([
    [
      "detectron2's inference_on_dataset",
      [
        frame('tools/train_net.py', 'main', 'res = Trainer.test(cfg, model)'),
        frame(`${SITE}/detectron2/evaluation/evaluator.py`, 'inference_on_dataset', 'outputs = model(inputs)'),
        ...FORWARD,
      ],
    ],
    [
      "a script's own inference loop",
      [frame('infer.py', '<module>', 'inference(model, loader)'), frame('infer.py', 'inference', 'out = model(batch)'), ...FORWARD],
    ],
    ["detectron2's evaluator.py whatever its function", [frame(`${SITE}/detectron2/evaluation/evaluator.py`, 'run', 'outputs = model(inputs)'), ...FORWARD]],
  ])('%s: evaluation, no_grad first', async (_name, frames) => {
    const d = await diagnosed(tb(frames, OOM));
    expect(d.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/inference_mode|no_grad/);
    noBatchChange(d);
  });

  it("the line a frame ran calls HF Trainer's evaluate() (frames inside it cut): HF's evaluation, eval_accumulation_steps first", async () => {
    const d = await diagnosed(tb([frame('run_glue.py', '<module>', 'metrics = trainer.evaluate()'), ...FORWARD], OOM));
    expect(d.facts).toMatchObject({ phase: 'eval', evalLoop: 'hf' });
    expect(first(d)).toMatch(/eval_accumulation_steps/);
  });

  it("the line calls Lightning's trainer.validate(): Lightning's validation", async () => {
    const d = await diagnosed(tb([frame('main.py', '<module>', 'trainer.validate(model, datamodule=dm)'), ...FORWARD], OOM));
    expect(d.facts).toMatchObject({ phase: 'eval', evalLoop: 'lightning' });
    expect(first(d)).toMatch(/validation_step/);
  });

  it('a training step frame inside stays training even under an evaluate() call line', async () => {
    const d = await diagnosed(tb([frame('main.py', '<module>', 'evaluate(model)'), frame('main.py', 'train_one_epoch', 'loss = model(x)'), ...FORWARD], OOM));
    expect(d.facts.phase).toBe('forward');
  });
});

const BARE_OOM =
  'RuntimeError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; 23.65 GiB total capacity; 21.70 GiB already allocated; 1.10 GiB free; 21.90 GiB reserved in total by PyTorch)';

describe('the evaluation read from the progress lines just above the error', () => {
  it.each([
    ["Lightning's test bar", 'Testing DataLoader 0:  37%|███▋      | 37/100 [00:12<00:21,  2.95it/s]', 'lightning'],
    ["Lightning's predict bar", 'Predicting DataLoader 0:  12%|█▏        | 12/100 [00:03<00:22,  3.90it/s]', 'lightning'],
    ['a tqdm bar an evaluation loop names', 'Evaluating:  45%|████▌     | 450/1000 [01:10<01:26,  6.36it/s]', 'plain'],
    ["detectron2's inference_on_dataset log", '[11/28 10:02:11 d2.evaluation.evaluator]: Start inference on 500 batches', 'plain'],
    ["mmengine's val loop", '11/28 10:02:11 - mmengine - INFO - Epoch(val) [3][ 50/500]    eta: 0:02:10  time: 0.2900', 'plain'],
  ])('%s: evaluation', async (_name, line, loop) => {
    const d = await diagnosed(`${line}\n${BARE_OOM}`);
    expect(d.facts).toMatchObject({ phase: 'eval', evalLoop: loop });
    noBatchChange(d);
  });

  it.each([
    [
      'Lightning',
      'Validation DataLoader 0: 100%|██████████| 50/50 [00:05<00:00,  9.81it/s]\nEpoch 2:   3%|▎         | 10/300 [00:04<02:00,  2.41it/s, loss=0.31]',
    ],
    [
      'mmengine',
      '11/28 - mmengine - INFO - Epoch(val) [3][500/500]    eta: 0:00:00\n11/28 - mmengine - INFO - Epoch(train) [4][ 50/900]  lr: 1e-4  loss: 0.51',
    ],
  ])('%s: an evaluation line followed by a training line is training again', async (_name, lines) => {
    const d = await diagnosed(`${lines}\n${BARE_OOM}`);
    expect(d.facts.phase).not.toBe('eval');
  });
});

describe('a memory figure larger than any accelerator is a wrapped counter, not this process', () => {
  it.each([
    ['TB', '127.994262TB'],
    ['GB', '16384.000000GB'],
  ])('Paddle: a tiny request, 0 B available and %s "allocated": the card was full before the job', async (_unit, figure) => {
    const d = await diagnosed(
      `RuntimeError: ResourceExhaustedError:\n\nOut of memory error on GPU 0. Cannot allocate 2.250000kB memory on GPU 0, ${figure} memory has been allocated and available memory is only 0.000000B.`,
    );
    expect(d.facts.holder).toBe('other_processes');
    expect(first(d)).toMatch(/CUDA_VISIBLE_DEVICES|another process/i);
  });

  it('a plausible allocated figure keeps the process itself as the holder', async () => {
    const d = await diagnosed(
      'RuntimeError: ResourceExhaustedError:\n\nOut of memory error on GPU 0. Cannot allocate 2.250000kB memory on GPU 0, 10.750000GB memory has been allocated and available memory is only 0.000000B.',
    );
    expect(d.facts.holder).not.toBe('other_processes');
  });

  it('the real thread (fresh/717): another process holds the card', async () => {
    const d = (await firstOfCase('fresh', '717'))!;
    expect(d.facts.holder).toBe('other_processes');
    expect(first(d)).toMatch(/CUDA_VISIBLE_DEVICES/);
  });
});

describe('a memory leak named beside what holds GPU memory is growth', () => {
  it.each([
    ['autograd', 'autograd branch: Memory leak\nThe following loop leaks memory:\n    grad_sum.backward()'],
    ['GPU', 'GPU memory leak when training with variable-length batches\nmemory_allocated climbs'],
    ['validation_step', 'validation_step memory leak\nreturning the loss from validation_step'],
    ['loss tensors', "Memory 'leak' due to compounding number of loss tensors\none more tensor each iteration"],
  ])('%s: growing_memory_leak, the leak fix or the experiment first, no batch change', async (_name, text) => {
    const d = await diagnosed(text);
    expect(d.category).toBe('growing_memory_leak');
    expect(first(d)).toMatch(/\.item\(\)|detach|memory_allocated/);
    noBatchChange(d);
  });

  it.each([
    ['a guess after another sentence', 'The latest code needs more GPU memory. Is it due to memory leak somewhere?'],
    ['host RAM', 'GPU training: memory leak in CPU RAM every epoch\nthe RAM loses 1 GB per epoch'],
  ])('%s: not a GPU growth', async (_name, text) => {
    const d = await diagnoseText(text);
    // Host RAM told growing per epoch is the host-RAM growth answer (words-anywhere.test.ts), never the GPU's.
    expect(d?.rule).not.toBe('gpu-memory-growth-reported');
    if (d?.category === 'growing_memory_leak') expect(d.rule).toBe('host-ram-growth-reported');
  });

  it.each([
    ['phase4', '1710'],
    ['blind', '1034'],
    ['unseen', '1166'],
  ])('real thread %s/%s: growth', async (group, num) => {
    const d = (await firstOfCase(group, num))!;
    expect(d.category).toBe('growing_memory_leak');
  });
});
