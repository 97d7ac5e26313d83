// vLLM found no memory for a single KV-cache block (issue 23 item 4: a command is read with its tool's own flags). The
// cache gets what is left of gpu_memory_utilization after the weights and the profiling run, a forward of
// max_num_batched_tokens tokens plus a sampler warm-up over max_num_seqs requests (default 256). Where the command
// already sets --max-model-len (and the share at its default or above), those scheduler limits lead, and the reply says
// which flags are already set instead of offering them again. Real thread (blind8 read split) beside synthetic variants
// written from vLLM's messages and flags (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const SCHED = /^vLLM found no memory for a single KV-cache block/;
const NO_BLOCKS = 'ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.';

describe('real thread', () => {
  it('blind8/5615: TP 2, util 0.9 and max-model-len 4096 already set: --max-num-seqs / --max-num-batched-tokens', async () => {
    const d = first(await firstOfCase('blind8', '5615'));
    expect(d).toMatch(SCHED);
    expect(d).toMatch(/already sets --tensor-parallel-size 2, --gpu-memory-utilization 0\.9, --max-model-len 4096/);
    expect(d).toMatch(/--max-num-seqs/);
  });
});

describe("synthetic variants (from vLLM's messages and flags)", () => {
  it('the Python engine arguments and the "# GPU blocks: 0" line', async () => {
    const paste = [
      'llm = LLM(model="Qwen/Qwen2.5-14B-Instruct", max_model_len=8192, gpu_memory_utilization=0.92)',
      'INFO 03-02 10:00:01 executor_base.py:110] # CUDA blocks: 0, # CPU blocks: 4096',
      NO_BLOCKS,
    ].join('\n');
    const d = first(await diagnosePaste(paste));
    expect(d).toMatch(SCHED);
    expect(d).toMatch(/--max-model-len 8192/);
  });
  it('control: no context set in the command keeps the general answer (lower --max-model-len first)', async () => {
    const paste = ['vllm serve meta-llama/Llama-3.1-8B-Instruct', NO_BLOCKS].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(SCHED);
  });
  it('control: a low share stated answers with the share first', async () => {
    const paste = ['vllm serve Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization 0.4 --max-model-len 4096', NO_BLOCKS].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(SCHED);
  });
  it('control: --max-num-seqs already small keeps the other levers', async () => {
    const paste = ['vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096 --max-num-seqs 4', NO_BLOCKS].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(SCHED);
  });
});
