// Principle (issue 23): steps that ran at the same settings before an OOM say the step fits, so the batch is not
// what changed: something kept across steps (a leak) or one larger input, and the reply gives the experiment that
// tells them apart instead of "halve the batch". The evidence is a framework's own progress line (HF Trainer's log
// dicts, tqdm bars carrying a loss, Lightning's "Epoch N:", Keras's "Epoch N/M") or a memory series in the paste,
// now also repeated nvidia-smi tables. Modules first (levers/progress.ts, memory-series.ts), then the CLI.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { trainingProgress, oomAfterSteps } from '../../src/diagnose/levers/progress.js';
import { classifyShape, extractMemorySeries } from '../../src/diagnose/memory-series.js';
import { batchLever } from '../../src/diagnose/levers.js';
import { diagnoseAll as diagnoseFileAll, type CaseDiagnosis } from './corpus-case.js';
import { flatView, incidentOf } from '../../src/diagnose/incident/index.js';

const hfLines = (from: number, to: number, total: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => {
    const step = (from + i) * 500;
    const pct = Math.floor((100 * step) / total);
    return ` ${pct}%|█████▋    | ${step}/${total} [23:35<17:18, 11.89it/s]{'loss': 0.${70 + i}, 'learning_rate': 8.7e-06, 'epoch': ${(step / 9000).toFixed(2)}}`;
  });
const lightning = (epoch: number, step: number) => `Epoch ${epoch}:  45%|████▌     | ${step}/1000 [05:12<06:21,  1.44it/s, v_num=7, train_loss=0.312]`;
const keras = [
  'Epoch 1/10',
  '1000/1000 [==============================] - 95s 95ms/step - loss: 0.5211',
  'Epoch 2/10',
  ' 412/1000 [===========>..................] - ETA: 55s - loss: 0.4410',
];
const smiTable = (mib: number, total = 24576) =>
  [
    '+-----------------------------------------------------------------------------------------+',
    '| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |',
    '|=========================================+========================+======================|',
    '|   0  NVIDIA GeForce RTX 4090        Off |   00000000:01:00.0 Off |                  Off |',
    `| 30%   45C    P2            220W /  450W |   ${mib}MiB / ${total}MiB |     98%      Default |`,
    '|   1  NVIDIA GeForce RTX 4090        Off |   00000000:02:00.0 Off |                  Off |',
    `| 30%   40C    P8             20W /  450W |      12MiB / ${total}MiB |      0%      Default |`,
    '+-----------------------------------------------------------------------------------------+',
  ].join('\n');

describe('levers/progress.ts: steps and epochs done, from fixed progress formats', () => {
  it.each([
    ["HF Trainer's tqdm with its log dicts", hfLines(30, 42, 28347).join('\n'), { stepsDone: 21000 }],
    ['HF log dicts past epoch 2', "{'loss': 0.41, 'grad_norm': 1.1, 'learning_rate': 1e-05, 'epoch': 2.37}", { epochsDone: 2 }],
    ["Lightning's bar in epoch 3", lightning(3, 450), { stepsDone: 450, epochsDone: 3 }],
    ['Keras epochs and steps', keras.join('\n'), { stepsDone: 412, epochsDone: 1 }],
    ['Keras epoch lines alone', 'Epoch 1/10\nEpoch 2/10\nEpoch 3/10', { epochsDone: 2, progressLine: 'Epoch 3/10' }],
    [
      'tqdm redraws joined by carriage returns',
      `train:  10%|#  | 100/1000 [00:10<01:30, loss=0.9]\rtrain:  20%|## | 200/1000 [00:20<01:20, loss=0.8]`,
      { stepsDone: 200 },
    ],
  ])('%s', (_name, text, want) => {
    expect(flatView(trainingProgress(text))).toMatchObject(want);
    expect(trainingProgress(text).progress.progressLine).toBeTruthy();
  });
  it.each([
    ['an evaluation bar (no loss, no epoch)', 'Evaluating:  60%|██████    | 300/500 [00:30<00:20, 10.0it/s]'],
    ['loading checkpoint shards', 'Loading checkpoint shards:  75%|███████▌  | 3/4 [00:10<00:03,  3.33s/it]'],
    ["a user's own sentence", 'it trained for 3000 steps and then the loss went down'],
  ])('%s is no training progress', (_name, text) => {
    expect(flatView(trainingProgress(text))).toEqual({});
  });
  it('what counts as "the step fit": a whole epoch or 50 steps, in a training phase, with no flat series', () => {
    expect(oomAfterSteps(incidentOf({ progress: { stepsDone: 450 }, phase: { name: 'forward' } }))).toBe(true);
    expect(oomAfterSteps(incidentOf({ progress: { epochsDone: 1 } }))).toBe(true);
    expect(oomAfterSteps(incidentOf({ progress: { stepsDone: 20 }, phase: { name: 'forward' } }))).toBe(false);
    expect(oomAfterSteps(incidentOf({ progress: { stepsDone: 450 }, phase: { name: 'eval' } }))).toBe(false);
    expect(oomAfterSteps(incidentOf({ progress: { stepsDone: 450 }, phase: { name: 'load' } }))).toBe(false);
    expect(oomAfterSteps(incidentOf({ progress: { stepsDone: 450 }, series: { memoryShape: 'flat' } }))).toBe(false);
    expect(oomAfterSteps(incidentOf({ progress: { stepsDone: 450 }, phase: { generating: true } }))).toBe(false);
    expect(batchLever(incidentOf({ run: { batch: 16 }, progress: { stepsDone: 450 }, phase: { name: 'forward' } }))).toEqual({
      holds: false,
      blockedBy: 'after_steps',
    });
  });
});

describe('memory-series.ts: repeated nvidia-smi tables are a series of the first GPU', () => {
  it('three tables or more: their first GPU, oldest first', () => {
    const text = [8000, 12000, 16000, 20000].map((m) => smiTable(m)).join('\nstep ...\n');
    expect(extractMemorySeries(text).map((p) => p.mib)).toEqual([8000, 12000, 16000, 20000]);
    expect(classifyShape(extractMemorySeries(text))?.shape).toBe('growth');
  });
  it('two tables are readings, not a trend', () => {
    expect(extractMemorySeries([8000, 12000].map((m) => smiTable(m)).join('\n'))).toEqual([]);
  });
  it('the same figure every time is flat', () => {
    expect(classifyShape(extractMemorySeries([20100, 20110, 20105].map((m) => smiTable(m)).join('\n')))?.shape).toBe('flat');
  });
});

const dir = mkdtempSync(join(tmpdir(), 'growth-levers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
async function diagnoseAll(text: string): Promise<CaseDiagnosis[]> {
  const file = join(dir, `case-${n++}.log`);
  writeFileSync(file, text);
  return diagnoseFileAll(file);
}
const diagnoseText = async (text: string) => (await diagnoseAll(text))[0];

const TRAIN_TB = [
  'Traceback (most recent call last):',
  '  File "train.py", line 211, in <module>',
  '    main()',
  '  File "train.py", line 160, in train_one_epoch',
  '    loss = criterion(model(images), targets)',
  '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1553, in _call_impl',
  '    return forward_call(*args, **kwargs)',
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.20 GiB. GPU 0 has a total capacity of 23.64 GiB of which 801.00 MiB is free. Of the allocated memory 22.10 GiB is allocated by PyTorch, and 290.00 MiB is reserved by PyTorch but unallocated.',
].join('\n');
const HF_TB = TRAIN_TB.replace(
  '  File "train.py", line 160, in train_one_epoch',
  '  File "/opt/conda/lib/python3.11/site-packages/transformers/trainer.py", line 3318, in training_step',
);
/** No fix changes the batch or tells to halve it. */
const batchNotChanged = (d: CaseDiagnosis) => {
  expect(d.fixes.every((f) => f.changes.batch === undefined)).toBe(true);
  expect(d.fixes.some((f) => /^(?:Reduce|Halve) the batch/.test(f.summary))).toBe(false);
};

describe('an OOM after training steps ran at these settings: the experiment, not the batch (CLI)', () => {
  it.each([
    ['HF Trainer after 21000 steps', 'python run_ner.py --per_device_train_batch_size 16\n' + hfLines(30, 42, 28347).join('\n') + '\n' + HF_TB, /21000\/28347/],
    ['Lightning in epoch 3', 'python train.py --batch-size 32\n' + lightning(3, 450) + '\n' + TRAIN_TB, /Epoch 3:/],
    ['Keras in epoch 2', 'python train.py --batch_size 64\n' + keras.join('\n') + '\n' + TRAIN_TB, /412\/1000/],
  ])('%s', async (_name, text, quoted) => {
    const d = await diagnoseText(text);
    expect(d.category).toBe('cuda_oom');
    const first = d.fixes[0].summary;
    expect(first).toMatch(/^Training ran at these settings before the card ran out/);
    expect(first).toMatch(quoted);
    expect(first).toMatch(/log torch\.cuda\.memory_allocated\(\) every 50 steps/);
    batchNotChanged(d);
  });

  it('20 steps are not evidence: the batch stays the lever (control)', async () => {
    const d = await diagnoseText('python train.py --batch-size 32\n' + lightning(0, 20) + '\n' + TRAIN_TB);
    expect(d.fixes[0].changes.batch).toBe(16);
  });
});

describe('repeated nvidia-smi tables before the OOM (CLI)', () => {
  it('rising: the OOM diagnosis says something accumulates, no batch change', async () => {
    const text = 'python train.py --batch-size 32\n' + [9000, 13000, 17000, 21000, 23800].map((m) => smiTable(m)).join('\n') + '\n' + TRAIN_TB;
    const oomDiagnosis = (await diagnoseAll(text)).find((d) => d.category === 'cuda_oom')!;
    expect(oomDiagnosis.facts.memoryShape).toBe('growth');
    expect(oomDiagnosis.fixes[0].summary).toMatch(/accumulates/);
    batchNotChanged(oomDiagnosis);
  });
  it('flat: each step needs more than the card, the batch is the lever (control)', async () => {
    const text = 'python train.py --batch-size 32\n' + [23500, 23510, 23505].map((m) => smiTable(m)).join('\n') + '\n' + TRAIN_TB;
    const d = await diagnoseText(text);
    expect(d.facts.memoryShape).toBe('flat');
    expect(d.fixes[0].changes.batch).toBe(16);
  });
});
