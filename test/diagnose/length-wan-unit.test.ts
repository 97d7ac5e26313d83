// The report's own experiment on a length written in Chinese units (src/diagnose/levers/smaller-input.ts): Chinese
// reports count tokens in 万 (ten thousand), often written W ("28W" = 280,000), and name the length "token长度",
// "输入长度", "上下文长度"; "不会报错" says a run worked. A length that worked and a longer one that failed make the
// length the lever, at any batch the report did not change. Real: blind9/5703 (a read split,
// https://github.com/thunlp/InfLLM/issues/21); the others are synthetic variants written from the convention.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readSmallerInput } from '../../src/diagnose/levers/smaller-input.js';

const TEST_TIMEOUT = 180_000;

describe('a length that worked and a longer one that failed, in 万 / W units', () => {
  it(
    'real: blind9/5703 (InfLLM on Qwen1.5-7B: 19W tokens run, 28W fail): the length first',
    async () => {
      expect((await firstOfCase('blind9', '5703'))?.fixes[0].summary).toMatch(/^The report says the run works at token长度 19W and fails at token长度 28W/);
    },
    TEST_TIMEOUT,
  );

  it('synthetic: W and 万, decimals, the reader alone', () => {
    expect(readSmallerInput('上下文长度 8万 可以跑，上下文长度 12万 就爆显存')).toEqual({ smallerWorked: '上下文长度 8万', largerFailed: '上下文长度 12万' });
    expect(readSmallerInput('输入长度1.5W不会报错，输入长度3W就OOM了')).toEqual({ smallerWorked: '输入长度 1.5W', largerFailed: '输入长度 3W' });
    // English forms keep their meaning
    expect(readSmallerInput('max_len 8000 works fine, max_len 16000 gives OOM')).toEqual({ smallerWorked: 'max_len 8000', largerFailed: 'max_len 16000' });
    // a W that is no unit (a wattage, a word) is no length
    expect(readSmallerInput('token长度 300W power supply works, OOM anyway')).toEqual({});
  });

  it(
    'synthetic: the whole paste, an inference OOM after the stated experiment',
    async () => {
      const paste =
        '用 vLLM 之外的脚本推理，token长度在6W以内不会报错，token长度10W就报错\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.77 GiB. GPU 0 has a total capacity of 79.15 GiB of which 3.20 GiB is free. Including non-PyTorch memory, this process has 75.94 GiB memory in use.';
      expect((await diagnosePaste(paste))?.fixes[0].summary).toMatch(/^The report says the run works at token长度 6W and fails at token长度 10W/);
    },
    TEST_TIMEOUT,
  );
});
