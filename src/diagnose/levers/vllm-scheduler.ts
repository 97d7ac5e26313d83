// vLLM found no memory for a single KV-cache block (issue 23 item 4: a command is read with its tool's own flags).
// vLLM sizes the cache from what is left of gpu_memory_utilization × card after the weights and its profiling run; the
// run is a forward of max_num_batched_tokens tokens and a sampler warm-up over max_num_seqs dummy requests (default
// 256 in V0, up to 1024 in V1), so with the context (--max-model-len) and the share already set in the command, those two scheduler limits are
// what is left to turn. Its fixed messages for zero blocks: V0's raise_if_cache_size_invalid "No available memory for
// the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.", the "# GPU blocks: 0" line,
// a negative "the rest of the memory reserved for KV Cache is -…" profile line. Patterns bounded, per line.
import type { Incident, StackPart } from '../incident/index.js';
import { boundedLines } from '../lines.js';
import { LOW_SHARE } from './memory-cap.js';

const ZERO_BLOCKS = /No available memory for the cache blocks|# (?:GPU|CUDA) blocks: 0,|reserved for KV Cache is -\d/;
// A flag as `vllm serve` / the OpenAI server takes it, or the engine argument's keyword (LLM(max_model_len=4096)).
const FLAG = (dash: string, snake: string) => new RegExp(String.raw`(?:--${dash}|\b${snake})(?:\s{1,3}|\s{0,2}[=:]\s{0,2})['"]?(\d{1,7}(?:\.\d{1,3})?)\b`);
const SET_FLAGS: [keyof VllmFlags, RegExp, string][] = [
  ['tp', FLAG('tensor-parallel-size', 'tensor_parallel_size'), '--tensor-parallel-size'],
  ['util', FLAG('gpu-memory-utilization', 'gpu_memory_utilization'), '--gpu-memory-utilization'],
  ['maxModelLen', FLAG('max-model-len', 'max_model_len'), '--max-model-len'],
  ['maxNumSeqs', FLAG('max-num-seqs', 'max_num_seqs'), '--max-num-seqs'],
];
type VllmFlags = { tp?: number; util?: number; maxModelLen?: number; maxNumSeqs?: number };
/** A max_num_seqs at or below this is already small: the scheduler's limits are then not what is left to turn. */
const SMALL_NUM_SEQS = 16;

/** Zero KV-cache blocks stated, and the scheduler flags the paste's command sets (as the reply quotes them). */
export function readVllmScheduler(text: string): Partial<StackPart> {
  let zero = false;
  const flags: VllmFlags = {};
  const said: string[] = [];
  for (const line of boundedLines(text, 20_000, 2000)) {
    if (!zero && ZERO_BLOCKS.test(line)) zero = true;
    if (!/max|parallel|utilization/.test(line)) continue;
    for (const [key, re, name] of SET_FLAGS) {
      const m = flags[key] === undefined ? re.exec(line) : null;
      if (!m) continue;
      flags[key] = Number(m[1]);
      said.push(`${name} ${m[1]}`);
    }
  }
  if (!zero) return {};
  return { vllmZeroBlocks: true, vllmFlags: flags, vllmFlagsSet: said.length > 0 ? said.join(', ') : undefined };
}

/**
 * Zero blocks, without vLLM's own profile figures (those answer with their numbers), where the command already set the
 * context length and left max_num_seqs at its default or large: the profiling run's scheduler limits come first. Not
 * under a share well below the default (vllm_share_low: that share first).
 */
export function vllmSchedulerFirst(i: Incident): boolean {
  const f = i.stack.vllmFlags;
  if (i.stack.vllmZeroBlocks !== true || f === undefined || i.stack.vllmProfile !== undefined) return false;
  if (f.util !== undefined && f.util < LOW_SHARE) return false;
  return f.maxModelLen !== undefined && (f.maxNumSeqs === undefined || f.maxNumSeqs > SMALL_NUM_SEQS);
}

export const VLLM_SCHEDULER_CONDITIONS = {
  vllm_no_blocks_scheduler: ({ incident }: { incident: Incident }) => vllmSchedulerFirst(incident),
};
