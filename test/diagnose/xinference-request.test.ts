// Xinference's model actor reports a CUDA OOM of a request to a model it already loaded (xinference/core/model.py logs
// "Model actor is out of memory, model id: %s[, error: %s]", older releases "Model actor is out of memory."): the
// stack is serving, so the reply names Xinference and turns its own knobs, the request's size first (an image's size
// for a vision model, the prompt / history and max_tokens for text), never a training batch (issue 23 item 5: a stack
// is read for its own message). Real: blind9/5702 (a read split, https://github.com/xorbitsai/inference/issues/3230);
// the others are synthetic variants written from the format.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;
const first = async (paste: string) => (await diagnosePaste(paste))?.fixes[0]?.summary ?? '';
const torchOom =
  'CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.02 GiB is free. Process 3120 has 22.52 GiB memory in use. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 190.11 MiB is reserved by PyTorch but unallocated.';

describe("Xinference's model actor OOM: a request to a loaded model, the request's size first", () => {
  it(
    'real: blind9/5702 (Qwen2.5-VL-7B over the OpenAI API, one jpg): Xinference named, the image size before any batch',
    async () => {
      const s = (await firstOfCase('blind9', '5702'))?.fixes[0].summary ?? '';
      expect(s).toMatch(/^Xinference is serving, not training/);
      expect(s.indexOf('image size')).toBeGreaterThan(0);
      expect(s.indexOf('image size')).toBeLessThan(s.indexOf('--quantization'));
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: the error-carrying line (a text model), and the older bare line with a traceback through xinference/',
    async () => {
      const withError = `2025-01-02 10:00:00,000 xinference.core.model 42 ERROR    Model actor is out of memory, model id: qwen2.5-instruct-0, error: ${torchOom}`;
      expect(await first(withError)).toMatch(/^Xinference is serving, not training: .*max_tokens/);
      const bare = `2024-06-01 08:00:00,000 xinference.core.model 77 ERROR    Model actor is out of memory.\nTraceback (most recent call last):\n  File "/opt/conda/lib/python3.10/site-packages/xinference/core/model.py", line 312, in chat\n    return await self._call_wrapper(...)\ntorch.cuda.OutOfMemoryError: ${torchOom}`;
      expect(await first(bare)).toMatch(/^Xinference is serving/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: the same PyTorch message with no Xinference line is not read as Xinference',
    async () => {
      expect(await first(`torch.cuda.OutOfMemoryError: ${torchOom}`)).not.toMatch(/Xinference/);
    },
    TEST_TIMEOUT,
  );
});
