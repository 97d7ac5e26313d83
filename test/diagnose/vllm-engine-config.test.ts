// vLLM's engine config line names the stack and states what its weights need (issue 23 items 2 and 5). vLLM logs
// "Initializing an LLM engine (v0.6.4) with config: model='...', dtype=torch.bfloat16, ..., tensor_parallel_size=1"
// (llm_engine.py; "Initializing a V0 LLM engine" in 0.7-0.8; v1's core.py "Initializing a V1 LLM engine (v0.8.5) with
// config:"; before 0.4 without the version).
// The line alone is vLLM's, even where no "vllm/" path or "vLLM" word is pasted; the model's size in its name at the
// served dtype, divided over tensor_parallel_size GPUs, is weighed against the card, and where the log names no card,
// against vLLM's default 0.9 share of a 141 GB H200: weights above it fit no card the run could have failed on, so
// sharding or a quantized checkpoint comes first, never --max-model-len or the batch. Real: blind9/5755 (a read split,
// https://github.com/vllm-project/vllm/issues/11560) and input12/6350 (a tuned group, https://github.com/vllm-project/vllm/pull/5714);
// the others are synthetic variants written from the format.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;
const first = async (paste: string) => (await diagnosePaste(paste))?.fixes[0]?.summary ?? '';
const engine = (prefix: string, model: string, dtype: string, tp: number) =>
  `${prefix}Initializing ${prefix.includes('core.py') ? 'a V1' : 'an'} LLM engine (v0.8.5) with config: model='${model}', speculative_config=None, tokenizer='${model}', skip_tokenizer_init=False, dtype=${dtype}, max_seq_len=32768, download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size=${tp}, pipeline_parallel_size=1, quantization=None, enforce_eager=False`;

describe("vLLM's engine config line: weights per GPU against the card", () => {
  it(
    'real: blind9/5755 (Qwen2-VL-72B in bf16 at tensor_parallel_size=1, no card stated): shard or quantize first',
    async () => {
      const d = await firstOfCase('blind9', '5755');
      expect(d?.fixes[0].summary).toMatch(/^The weights alone do not fit this GPU \(weights 72B × 2 B = 134\.11 GiB > 0\.9 × 141 GB/);
      expect(d?.fixes[0].summary).toMatch(/--tensor-parallel-size 4/);
    },
    TEST_TIMEOUT,
  );

  it(
    'real: input12/6350 (Llama 3 70B in bf16 on "a single 80GB GPU", the engine line cut before tensor_parallel_size): a card sized in words goes to the weights lever that reads it',
    async () => {
      expect((await firstOfCase('input12', '6350'))?.fixes[0].summary).toMatch(
        /^The weights alone fill the card: 70B parameters × 2 B ≈ 130\.39 GiB of weights against the 80\.00 GiB card.*quantize first/,
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: the v1 line with its process prefix, a 70B bf16 at TP 1: sharded or quantized; at TP 4 it fits',
    async () => {
      const v1 = '(EngineCore_0 pid=211) INFO 03-02 10:00:00 [core.py:77] ';
      const oom = '\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB.';
      expect(await first(engine(v1, 'meta-llama/Llama-3.1-70B-Instruct', 'torch.bfloat16', 1) + oom)).toMatch(
        /^The weights alone do not fit this GPU \(weights 70B × 2 B = 130\.39 GiB.*--tensor-parallel-size/,
      );
      expect(await first(engine(v1, 'meta-llama/Llama-3.1-70B-Instruct', 'torch.bfloat16', 4) + oom)).not.toMatch(/The weights alone do not fit/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: the v0 line, a 7B model or a card that holds the weights: not this lever',
    async () => {
      const v0 = 'INFO 05-01 08:00:00 llm_engine.py:161] ';
      const oom = '\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB.';
      expect(await first(engine(v0, 'Qwen/Qwen2.5-7B-Instruct', 'torch.float16', 1) + oom)).not.toMatch(/The weights alone do not fit/);
      // a 34B model on a stated 80 GB card: 63 GiB of weights fit it
      const stated =
        '\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 76.50 GiB is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but unallocated.';
      expect(await first(engine(v0, '/models/Yi-34B-Chat', 'torch.bfloat16', 1) + stated)).not.toMatch(/The weights alone do not fit/);
      // vLLM 0.7-0.8's V0 engine names itself so ("Initializing a V0 LLM engine (v0.8.4) with config:")
      const v0Named = engine(v0, 'Qwen/Qwen2.5-72B-Instruct', 'torch.bfloat16', 1).replace('Initializing an LLM', 'Initializing a V0 LLM');
      expect(await first(v0Named + oom)).toMatch(/^The weights alone do not fit this GPU \(weights 72B × 2 B/);
      // a 180B model on that card: 335 GiB, over it
      expect(await first(engine(v0, 'tiiuae/falcon-180B-chat', 'torch.bfloat16', 1) + stated)).toMatch(
        /^The weights alone do not fit this GPU \(weights 180B × 2 B/,
      );
    },
    TEST_TIMEOUT,
  );
});
