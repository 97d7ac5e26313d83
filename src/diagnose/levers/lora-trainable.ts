// Whole modules trained beside LoRA adapters (issue 23: static memory that does not fit is not the batch's). PEFT's
// PeftModel.print_trainable_parameters prints "trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%:
// 0.0622" (peft <= 0.4 without the thousands commas: "trainable params: 4194304 || all params: 6742609920 ||
// trainable%: 0.06220594176090199"); LLaMA-Factory and others print the same line. LoRA's adapters are rank × (in + out)
// per adapted matrix: a few percent of the model at most, even at rank 256 on every linear layer. A share of tens of
// percent in a LoRA run means whole layers train beside the adapters: the embedding and the output layer
// (modules_to_save, wte / embed_tokens / lm_head, which scripts add when the base model needs new special tokens),
// each with its gradients and optimizer state, as in full fine-tuning. Those states, not the batch, are what the
// adapter run was meant to avoid. Read from the fixed line, bounded, per line (untrusted input, linear).
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';

const MAX_LINE = 600;
const NUM = String.raw`(\d{1,3}(?:,\d{3}){1,5}|\d{1,16})`;
const TRAINABLE = new RegExp(String.raw`trainable params: ${NUM} \|\| all params: ${NUM} \|\| trainable%: (\d{1,3}(?:\.\d{1,20})?)`);
/** Above this share, more than adapters train (rank-256 LoRA on every linear layer of a 7B model is ~9%). */
const WIDE_PCT = 10;
/** At this share or above the run trains everything: a full fine-tune prints the same line. */
const FULL_PCT = 99;

/** PEFT's trainable-parameter line, when its share is wider than adapters alone. */
export function readLoraTrainable(log: LogText): Partial<StackPart> {
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l);
    if (!line.includes('trainable%')) continue;
    const m = TRAINABLE.exec(line.slice(0, MAX_LINE));
    if (!m) continue;
    const pct = Number(m[3]);
    if (pct < WIDE_PCT || pct >= FULL_PCT) return {};
    return { trainableWide: `trainable params: ${m[1]} || all params: ${m[2]} || trainable%: ${pct.toFixed(1)}` };
  }
  return {};
}

export const LORA_TRAINABLE_CONDITIONS = {
  // A LoRA/PEFT training run that trains a tenth of the model or more: the trained embedding / output layers first.
  lora_trains_whole_layers: ({ incident: i }: { incident: Incident }) =>
    i.stack.trainableWide !== undefined && i.run.fullTrainingStated !== true && i.phase.name !== 'eval' && i.phase.name !== 'load',
};
