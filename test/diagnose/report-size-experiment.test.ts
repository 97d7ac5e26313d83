// The report's own input experiment in the forms people write it (issue 23): stated sizes that ran and a larger one
// said only in words to fail ("416*240 and 832*480 are fine, higher resolutions run out of memory", "用416*240与832*480
// 测试没有问题，但使用更高分辨率的就会爆显存"), or a size the run was changed to before it failed ("将输入图片尺寸修改为
// [480, 640]，则代码将无法正常工作，并提示显存不足"). The input decides there, also in an evaluation read only from the
// report's words: the same loop ran at the smaller input, so missing no_grad is no longer the first guess. Markdown's
// escaped star and a capital X are the same size ("1024\*1024", "1024X1024"). Real threads (blind6 / blind7 read
// splits) beside synthetic variants written from the principle (said so).
import { describe, expect, it } from 'vitest';
import { readSmallerInput } from '../../src/diagnose/levers/smaller-input.js';
import { readInputSize } from '../../src/diagnose/levers/input-size.js';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const EXPERIMENT = /^The report says the run works at /;

describe('real threads', () => {
  it('blind7/3905: sizes that ran and "更高分辨率" that failed, in a test run: the input, not no_grad', async () => {
    const d = await firstOfCase('blind7', '3905');
    expect(first(d)).toMatch(/^The report says the run works at 832\*480 and fails at 更高分辨率/);
  });
  it('blind6/3809: the input size changed to [480, 640], batch 1 still fails: the input', async () => {
    expect(first(await firstOfCase('blind6', '3809'))).toMatch(/works at the size before the change and fails at \[480, 640\]/);
  });
});

describe('the forms (synthetic variants)', () => {
  it.each([
    ['larger in words (en)', 'Testing with 512x512 and 768x768 works fine, but higher resolution images run out of memory.', '768x768', 'higher resolution'],
    ['larger in words (zh)', '用512*512测试没有问题，但是更大的图片就爆显存了', '512*512', '更大的图片'],
    ['changed to (en)', 'When I changed the image size to 1024x1024 the training fails with CUDA out of memory', 'the size before the change', '1024x1024'],
    ['changed to (zh)', '把分辨率改为[1080, 1920]后就显存不足了', 'the size before the change', '[1080, 1920]'],
  ])('%s', (_name, text, worked, failed) => {
    expect(readSmallerInput(text)).toEqual({ smallerWorked: worked, largerFailed: failed });
  });
  it('no failure, or sizes that all ran: no experiment', () => {
    expect(readSmallerInput('I changed the image size to 1024x1024 and the results look better').smallerWorked).toBeUndefined();
    expect(readSmallerInput('512x512 and 1024x1024 both work fine').smallerWorked).toBeUndefined();
  });
  it('an escaped star and a capital X read as sizes', () => {
    expect(readInputSize('images of 2048\\*2048 pixels').inputPixels).toBe(2048 * 2048);
    expect(readInputSize('图片大小为1024X1024').inputPixels).toBe(1024 * 1024);
  });
  it('an evaluation told in words with the experiment: the input first; without it: no_grad stays', async () => {
    const oom =
      'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 10.76 GiB total capacity; 8.10 GiB already allocated; 1.50 GiB free; 8.20 GiB reserved in total by PyTorch)';
    const withSizes = await diagnosePaste(`OOM during testing\nTesting at 640x480 works fine, but higher resolution images run out of memory.\n${oom}`);
    expect(first(withSizes)).toMatch(EXPERIMENT);
    const without = await diagnosePaste(`OOM during testing\nThe test script runs out of memory.\n${oom}`);
    expect(first(without)).not.toMatch(EXPERIMENT);
  });
});
