// Principle (issue 23, growth: leak_fix; session 39 g1): code in the paste that keeps a loss tensor across steps is the
// holder the OOM names, whatever the message's figures: a running total (total_loss += loss), outputs appended, or a
// running-average meter fed the tensor itself (the ImageNet example's AverageMeter written without .item():
// losses.update(loss, input.size(0)), the PyTorch 0.4 migration from loss.data[0] to loss). Each keeps the step's graph,
// so the CUDA OOM's first fix releases it (loss.item(), loss = None) before any capacity lever.
// The real case is from the read split blind10; the others are synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readKeptReference } from '../../src/diagnose/levers/growth.js';

const OOM =
  'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 GiB total capacity; 10.61 GiB already allocated; 5.81 MiB free; 10.72 GiB reserved in total by PyTorch)';
const kept = (line: string) => readKeptReference(line).series?.keptReference;

describe('a loss tensor kept across steps, shown in the paste, with a CUDA OOM: release it first', () => {
  it('real: "losses.update(loss, input.size(0))" after loss.data[0] became loss (blind10 6265)', async () => {
    const d = await firstOfCase('blind10', '6265');
    expect(d?.fixes[0].summary).toMatch(/loss\.item\(\)/);
  });

  it.each(['losses.update(loss, images.size(0))', 'train_loss_meter.update(loss_total)', 'meter.update(criterion_loss, n=bs)'])(
    'synthetic: %j is a meter fed the loss tensor',
    (line) => {
      expect(kept(line)).toBeDefined();
    },
  );

  it.each(['losses.update(loss.item(), images.size(0))', 'meter.update(float(loss), n)', 'scheduler.update(lr)', 'ema.update(model)'])(
    'synthetic control: %j keeps no tensor',
    (line) => {
      expect(kept(line)).toBeUndefined();
    },
  );

  it('synthetic: the meter line beside an OOM message answers with the release, not the batch', async () => {
    const d = await diagnosePaste(`My training crashes after a few epochs.\n    losses.update(loss, input.size(0))\n${OOM}\n`);
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].summary).toMatch(/loss\.item\(\)/);
    expect(d?.fixes[0].summary).not.toMatch(/^Reduce the batch/);
  });
});
