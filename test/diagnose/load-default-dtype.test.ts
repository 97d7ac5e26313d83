// transformers 4's default load dtype (src/diagnose/levers/load-default-dtype.ts): a model class's from_pretrained call
// with no torch_dtype / dtype / quantization argument, no half-precision conversion in the paste and no transformers 5
// stated loads float32, 4 bytes per parameter; where that fills the card and half precision would not, the dtype at
// load comes first, never the batch. A cast to torch.int8 is no quantized load. Real: blind9/5760 (a read split,
// https://github.com/replit/ReplitLM/issues/12); the others are synthetic variants written from the API.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { fromPretrainedFp32 } from '../../src/diagnose/levers/load-default-dtype.js';

const TEST_TIMEOUT = 180_000;
const oom =
  'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 11.76 GiB total capacity; 11.02 GiB already allocated; 28.50 MiB free; 11.30 GiB reserved in total by PyTorch)';
const code = (args: string) =>
  `from transformers import AutoModelForCausalLM, AutoTokenizer\ntok = AutoTokenizer.from_pretrained("bigscience/bloom-3b")\nmodel = AutoModelForCausalLM.from_pretrained(\n    "bigscience/bloom-3b",\n${args})\nmodel.to("cuda")\n${oom}`;

describe("from_pretrained with no dtype loads float32 (transformers 4's default)", () => {
  it(
    'real: blind9/5760 (replit-code-v1-3b built on the GPU with no torch_dtype on an 8 GB card): half precision first',
    async () => {
      const d = await firstOfCase('blind9', '5760');
      expect(d?.fixes[0].summary).toMatch(
        /^The weights alone do not fit in fp32: 3B parameters in fp32 \(AutoModelForCausalLM\.from_pretrained\(\) is given no torch_dtype/,
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: a multi-line call without dtype on a 12 GB card: fp32 read, half precision first',
    async () => {
      expect((await diagnosePaste(code('    trust_remote_code=True,\n')))?.fixes[0].summary).toMatch(
        /^The weights alone do not fit in fp32: 3B parameters in fp32/,
      );
    },
    TEST_TIMEOUT,
  );

  it('synthetic: a dtype argument, a conversion, transformers 5 or only a tokenizer: no default fp32', () => {
    expect(fromPretrainedFp32(code('    torch_dtype=torch.float16,\n'))).toBeUndefined();
    expect(fromPretrainedFp32(code('    dtype="auto",\n'))).toBeUndefined();
    expect(fromPretrainedFp32(code('    load_in_8bit=True,\n'))).toBeUndefined();
    expect(fromPretrainedFp32(code('') + '\nmodel = model.half()')).toBeUndefined();
    expect(fromPretrainedFp32('transformers version: 5.1.0\n' + code(''))).toBeUndefined();
    expect(fromPretrainedFp32('tok = AutoTokenizer.from_pretrained("gpt2")\n' + oom)).toBeUndefined();
    expect(fromPretrainedFp32(code(''))).toBe('AutoModelForCausalLM.from_pretrained');
  });
});
