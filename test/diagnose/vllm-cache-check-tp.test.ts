// vLLM's KV-cache check is read by its own frames when the paste is cut before its message (raise_if_cache_size_invalid in
// vLLM 0.4-0.6's worker, check_enough_kv_cache_memory in v1), and weights split by --tensor-parallel-size N are 1/N per
// card, so they do not "fill the card" when each share fits (issue 23 items 1 and 5; vllm-kv-cache-too-small,
// levers/quantize.ts). The real example is a case of the read split blind6 (a real public thread, its cases.json); the
// others are synthetic variants written from vLLM's fixed frames and flags, and say so in their names.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;

describe("vLLM's cache check by its frames, and tensor parallelism dividing the weights", () => {
  it(
    'real: blind6/3886 (33B fp16 with --tensor-parallel-size 2 on two 48 GB L40s, cut at raise_if_cache_size_invalid)',
    async () => {
      const d = await firstOfCase('blind6', '3886');
      expect(d?.rule).toBe('vllm-kv-cache-too-small');
      expect(d!.fixes[0].summary).toMatch(/^vLLM had no GPU memory left for the KV cache .*lower --max-model-len/);
    },
    TEST_TIMEOUT,
  );

  it(
    "synthetic: v1's check_enough_kv_cache_memory frame; a 70B model in words over two cards with and without TP 4",
    async () => {
      const v1 =
        '(EngineCore_DP0 pid=1234) ERROR 01-01 10:00:00 [core.py:708]   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/core/kv_cache_utils.py", line 1243, in get_kv_cache_configs\n' +
        '(EngineCore_DP0 pid=1234) ERROR 01-01 10:00:00 [core.py:708]     check_enough_kv_cache_memory(vllm_config, kv_cache_spec_one_worker,\n';
      expect((await diagnosePaste(v1))?.rule).toBe('vllm-kv-cache-too-small');
      const words = (tp: string) =>
        `Not enough GPU memory when I serve Llama-2-70b-chat in float16 on 4 x A100 80GB\npython -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-2-70b-chat-hf --dtype float16${tp}\n`;
      const split = (await diagnosePaste(words(' --tensor-parallel-size 4')))?.fixes[0]?.summary ?? '';
      expect(split).not.toMatch(/weights (?:alone fill|are what fills) the card/);
      expect(split).toMatch(/^vLLM is serving, not training/);
      // without TP, 4 x 80 GB hold the 130 GiB together: splitting over the stated cards keeps 16 bits, so it comes before quantizing (levers/split-cards.ts)
      expect((await diagnosePaste(words('')))?.fixes[0]?.summary ?? '').toMatch(
        /^The weights fill one card while 4 GPUs are there[\s\S]*--tensor-parallel-size/,
      );
    },
    TEST_TIMEOUT,
  );
});
