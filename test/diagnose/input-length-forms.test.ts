// A video's or recording's length stated approximately (issue 23): "5分钟左右的视频", "a 10 minute or so recording" are
// the same long input as "a 5 minute video"; the clip's length is the lever, not the batch. Real thread (blind7 read
// split) beside synthetic variants (said so).
import { describe, expect, it } from 'vitest';
import { readInputLength } from '../../src/diagnose/levers/input-length.js';
import { firstOfCase } from './corpus-case.js';

describe('approximate durations', () => {
  it('blind7/3904: a video of about 5 minutes at fps 2 for Qwen-VL: the clip is the lever, its frames named', async () => {
    expect((await firstOfCase('blind7', '3904'))?.fixes[0]?.summary).toMatch(/^One input is long \(5分钟左右的视频\)[\s\S]*frames/);
  });
  it.each([
    ['10分钟左右的视频', 600, 'video'],
    ['一个3分钟多的视频', 180, 'video'],
    ['a 10 minute or so recording', 600, 'audio'],
  ])('synthetic: "%s"', (text, s, kind) => {
    expect(readInputLength(text)).toMatchObject({ inputLength: s, inputLengthKind: kind });
  });
  it('synthetic control: a duration with no video or audio noun is no input', () => {
    expect(readInputLength('训练了5分钟左右就报错').inputLength).toBeUndefined();
  });
});
