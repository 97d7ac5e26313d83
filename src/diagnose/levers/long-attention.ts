// One long sequence outside a training step (issue 23): an inference or an evaluation over samples of L tokens. Run
// eagerly, attention builds a heads × L × L score matrix in every layer (20k tokens: 400M scores per head), which grows
// with the square of the length and dwarfs a 7B model's weights on any card; a fused kernel (SDPA, FlashAttention)
// never stores it. So where the paste states a length of LONG_SEQUENCE tokens or more and no training step runs (a
// training step is sequence.ts's), at no stated batch above 2, the attention implementation and then the length lead,
// before the no_grad guess of an evaluation told only in words.
import { generationLengthFirst } from './generation-length.js';
import { LONG_SEQUENCE } from './sequence.js';
import { staticOverCard } from './static-fit.js';
import type { Incident, PhasePart } from '../incident/index.js';

const SMALL_BATCH = 2;
const ATTENTION_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'generate', 'eval']);
const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';

/** A stated long sequence in an inference or evaluation: fused attention, then the length, come first. */
export function longAttentionFirst(f: Incident): boolean {
  if (f.sequence.seqLen === undefined || f.sequence.seqLen < LONG_SEQUENCE) return false;
  if (f.run.training === true && f.phase.name !== 'eval') return false;
  if (f.run.inference === true) return false; // a serving tool answers with its own context knobs (generation-length.ts)
  // A generate() request of that length: its KV cache grows with every token, so the request's length answers (generation-length.ts).
  if (generationLengthFirst(f)) return false;
  // HF Trainer's evaluation keeps every batch's logits (vocabulary × length): its own gathering levers answer (eval.ts).
  if (f.phase.evalLoop === 'hf' || f.phase.gathersPredictions === true) return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) return false;
  return ATTENTION_PHASES.has(f.phase.name) && !grows(f) && !staticOverCard(f);
}
