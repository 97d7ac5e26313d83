// The optimizer's state named where the failure is told, for pastes whose traceback shows no frame (issue 23: the phase
// decides the lever). torch.optim's Adam / AdamW create their state lazily in the first step, by fixed code: `_init_group`
// runs `state['exp_avg'] = torch.zeros_like(p, memory_format=torch.preserve_format)` and the same for exp_avg_sq, two
// tensors of each parameter's size. A line that names that state or function beside the failure places it there (a
// traceback cut to its source line does too); a smaller batch does not shrink it. Bounded, per line.
import type { PhaseVerdict } from '../phase.js';
import { boundedLines } from '../lines.js';

// Adam's state keys and its lazy init, as torch.optim spells them (and its source line creating them).
const OPTIMIZER_STATE = /\bexp_avg(?:_sq)?\b|\b_init_group\b|\bstate\[\s?['"]exp_avg/;
const FAILURE = /out of memory|\bOOM\b|OutOfMemory|显存(?:不足|不够|爆|溢出)|爆显存/i;
const STATE_CREATED = /\bstate\[\s?['"]exp_avg(?:_sq)?['"]\s?\]\s?=\s?torch\.zeros_like\(/;
const QUOTE_CHARS = 140;

/** The optimizer step as the phase, from a line that names Adam's state at the failure (or its creating source line). */
export function optimizerStateSaid(text: string): PhaseVerdict | undefined {
  for (const line of boundedLines(text, 400, 600)) {
    if (!OPTIMIZER_STATE.test(line) || !(FAILURE.test(line) || STATE_CREATED.test(line))) continue;
    const t = line.trim();
    return { phase: 'optimizer', frame: `"${t.length <= QUOTE_CHARS ? t : `${t.slice(0, QUOTE_CHARS)}…`}"` };
  }
  return undefined;
}
