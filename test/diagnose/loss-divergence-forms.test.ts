// Issue 23, confusers: a NaN or an exploding loss read as memory. Two fixed forms say the run diverged:
// (1) the total loss on a framework's progress lines (mmcv/mmdet "Epoch [6][3250/3681] ... loss: 225192.6", mmengine
// "Epoch(train) [1][ 50/1000] ... loss: X", HF Trainer "{'loss': X", Lightning's bar "loss=X") jumping by orders of
// magnitude or turning nan before a kernel fails; (2) PyTorch's binary_cross_entropy kernel assertion
// "Assertion `input_val >= zero && input_val <= one` failed" (Loss.cu: a NaN or a missing sigmoid). The lever is the
// learning rate / clipping or the logits form, not memory nor the batch. Real: blind9/5778 (read split), stacks12/6463
// and 6466 (tuned); the rest synthetic, written from those formats. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { LogText } from '../../src/diagnose/normalize.js';
import { readLossDivergence, readLossSeries } from '../../src/diagnose/levers/loss-diverged.js';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const mmcv = (loss: string, i: number) =>
  `2019-12-03 13:3${i}:58,567 - INFO - Epoch [6][${3000 + 50 * i}/3681]\tlr: 0.02000, eta: 3:50:55, time: 0.924, data_time: 0.005, memory: 6147, loss_rpn_cls: 0.0431, loss_cls: 0.2494, acc: 90.6348, loss_bbox: 0.2668, loss: ${loss}`;

describe('an exploding loss on the progress lines is divergence', () => {
  it('real blind9/5778: mmdet loss 1.0 -> 2e5 before an illegal memory access', async () => {
    const d = await firstOfCase('blind9', '5778');
    expect(d?.fixes[0].summary).toMatch(/1\.0083 -> 2\.3e\+5.*Lower the learning rate/);
  });

  // synthetic: the four progress forms, a jump and a turn to nan
  it.each([
    ['mmcv jump', [mmcv('0.6186', 1), mmcv('1.0083', 2), mmcv('225192.6129', 3)].join('\n'), '1.0083 -> 2.3e+5'],
    [
      'mmengine nan',
      [
        'Epoch(train)  [1][ 50/1000]  lr: 1.0e-03  loss: 1.2345',
        'Epoch(train)  [1][100/1000]  lr: 1.0e-03  loss: 1.1002',
        'Epoch(train)  [1][150/1000]  lr: 1.0e-03  loss: nan',
      ].join('\n'),
      '1.1002 -> nan',
    ],
    [
      'HF Trainer dict',
      [
        "{'loss': 2.3456, 'grad_norm': 1.2, 'learning_rate': 5e-05, 'epoch': 0.1}",
        "{'loss': 2.1, 'grad_norm': 1.1, 'learning_rate': 5e-05, 'epoch': 0.2}",
        "{'loss': 4512.7, 'grad_norm': 9e4, 'learning_rate': 5e-05, 'epoch': 0.3}",
      ].join('\n'),
      '2.1 -> 4512.7',
    ],
    [
      'Lightning bar',
      [
        'Epoch 0: 100%|██| 500/500 [01:00<00:00, loss=0.85, v_num=1]',
        'Epoch 1: 100%|██| 500/500 [01:00<00:00, loss=0.61, v_num=1]',
        'Epoch 2:  40%|█ | 200/500 [00:24<00:36, loss=nan, v_num=1]',
      ].join('\n'),
      '0.61 -> nan',
    ],
  ])('synthetic: %s', (_n, text, jump) => {
    expect(readLossDivergence(new LogText(text)).lossJump).toBe(jump);
  });

  it('synthetic: a falling loss, component losses and a single reading are no divergence', () => {
    expect(readLossDivergence(new LogText([mmcv('2.1', 1), mmcv('1.4', 2), mmcv('0.9', 3)].join('\n'))).lossJump).toBeUndefined();
    expect(readLossSeries(new LogText('Epoch [1][50/100]\tloss_cls: 117119.4, loss_bbox: 0.2, loss: 0.5'))).toEqual([0.5]);
    expect(readLossDivergence(new LogText("{'loss': nan, 'epoch': 0.1}")).lossJump).toBeUndefined();
  });

  it('synthetic: the jump before an illegal memory access leads the reply', async () => {
    const d = await diagnosePaste(
      `${[mmcv('0.7', 1), mmcv('0.8', 2), mmcv('98000.5', 3)].join('\n')}\nRuntimeError: CUDA error: an illegal memory access was encountered`,
    );
    expect(d?.category).toBe('device_assert_not_memory');
    expect(d?.fixes[0].summary).toMatch(/learning rate/);
  });
});

describe("binary_cross_entropy's input assertion is a NaN or a missing sigmoid", () => {
  it.each([
    ['stacks12', '6463'],
    ['stacks12', '6466'],
  ])('real %s/%s', async (g, n) => {
    const d = await firstOfCase(g, n);
    expect(d?.rule).toBe('bce-input-out-of-range');
    expect(d?.fixes[0].summary).toMatch(/BCEWithLogitsLoss|learning rate/);
  });

  // synthetic: old and new Loss.cu paths, ROCm-free Windows path, behind a progress bar
  it.each([
    '/pytorch/aten/src/ATen/native/cuda/Loss.cu:115: operator(): block: [3,0,0], thread: [1,0,0] Assertion `input_val >= zero && input_val <= one` failed.',
    'C:\\w\\b\\windows\\pytorch\\aten\\src\\ATen\\native\\cuda\\Loss.cu:92: block: [7,0,0], thread: [0,0,0] Assertion `input_val >= zero && input_val <= one` failed.\nRuntimeError: CUDA error: device-side assert triggered',
  ])('synthetic %#', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('bce-input-out-of-range');
    expect(d?.fixes.some((f) => f.changes.batch !== undefined)).toBe(false);
  });
});
