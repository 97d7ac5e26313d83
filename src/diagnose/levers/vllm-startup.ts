// vLLM's own start-up checks, read from their fixed messages (issue 23 item 5: a stack is read for its own numbers).
// - v1's request_memory (gpu_worker.py / worker/utils.py): "Free memory on device [cuda:0 ](12.18/23.56 GiB) on startup is
//   less than desired GPU memory utilization (0.9, 21.20 GiB)". vLLM asks for a share of the WHOLE card and finds less
//   free: something else holds the rest. When what is free is most of what it asks for, a share just under the free
//   part starts it; when most of the card is held, the holder (often a leftover engine of an earlier run) comes first.
// - v1's sampler warm-up (gpu_model_runner.py _dummy_sampler_run): "CUDA out of memory occurred when warming up sampler
//   with 1024 dummy requests": it runs after the KV cache took its share, with max_num_seqs requests.
// Patterns anchored on vLLM's text, bounded, per line (untrusted input, linear).
import { mergeInto, type Incident, type StackPart } from '../incident/index.js';
import { boundedLines } from '../lines.js';

const FREE_AT_START =
  /Free memory on device (?:[a-z]{2,6}:\d{1,3} )?\((\d{1,5}(?:\.\d{1,3})?)\/(\d{1,5}(?:\.\d{1,3})?) GiB\) on startup is less than desired GPU memory utilization \((0?\.\d{1,4}|1(?:\.0{1,4})?), (\d{1,5}(?:\.\d{1,3})?) GiB\)/;
// The message is often pasted wrapped ("... with 1024 \ndummy requests"): read a line together with the one before it.
const SAMPLER_WARMUP = /out of memory occurred when warming up (?:the )?(sampler|pooler)[^\n]{0,40}? with (\d{1,6})\s{1,3}dummy requests/;
/** What is free covers at least this share of vLLM's request: the share, not another holder, is what to turn. */
const NEAR = 0.85;
/** Kept off the free part when a share is suggested: other CUDA contexts and the driver take a little more as it starts. */
const MARGIN_GIB = 0.5;

/** The start-up check's figures and the warm-up's request count, as the reply quotes them. */
export function readVllmStartup(text: string): Partial<StackPart> {
  const part: Partial<StackPart> = {};
  let prev = '';
  for (const line of boundedLines(text, 20_000, 2000)) {
    if (part.vllmStartFree === undefined && line.includes('on startup is less than')) {
      const m = FREE_AT_START.exec(line);
      if (m) {
        const [free, total, util, asked] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
        if (total <= 0) continue;
        part.vllmStartFree = `${m[1]}/${m[2]} GiB`;
        part.vllmStartAsk = `${m[3]} × ${m[2]} = ${m[4]} GiB`;
        part.vllmStartHeld = `${(total - free).toFixed(2)} GiB`;
        part.vllmStartNear = free >= NEAR * asked && util > 0;
        part.vllmStartUtilFits = Math.max(0.05, Math.floor(((free - MARGIN_GIB) / total) * 100) / 100).toFixed(2);
      }
    }
    if (part.vllmWarmupSeqs === undefined && line.includes('dummy requests')) {
      const m = SAMPLER_WARMUP.exec(line) ?? SAMPLER_WARMUP.exec(`${prev} ${line}`);
      if (m) {
        part.vllmWarmupSeqs = Number(m[2]);
        part.vllmWarmupSeqsHalf = Math.max(1, Math.floor(Number(m[2]) / 2));
      }
    }
    prev = line;
  }
  return part;
}

/** Reads vLLM's start-up figures into the incident: what was free at its start, of the card, is the holder's evidence (holder.ts). */
export function applyVllmStartup(text: string, incident: Incident): void {
  const part = readVllmStartup(text);
  mergeInto(incident, { stack: part });
  if (part.vllmStartFree === undefined) return;
  const [free, total] = part.vllmStartFree.replace(' GiB', '').split('/').map(Number);
  incident.figures.startupFreeMiB ??= free * 1024;
  incident.figures.totalCapacityMiB ??= total * 1024;
}

export const VLLM_STARTUP_CONDITIONS = {
  // Most of what vLLM asked for is free: a share just under the free part starts it.
  vllm_start_near: ({ incident: i }: { incident: Incident }) => i.stack.vllmStartNear === true,
  // Much of the card is held by something else: that holder first.
  vllm_start_held: ({ incident: i }: { incident: Incident }) => i.stack.vllmStartNear === false,
  vllm_warmup_seqs: ({ incident: i }: { incident: Incident }) => i.stack.vllmWarmupSeqs !== undefined,
};
