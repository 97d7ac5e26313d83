// The phase the reporter names, for pastes whose traceback shows no frame that says it (issue 23): "CUDA
// out of memory during validation", "trainer.evaluate() ... runs out of memory", "验证时显存不足". Frames
// decide when they exist (phase.ts); a sentence is weaker evidence and is read only when they say nothing.
// The sentence must name the failure and the phase together: a run that fails "after validation" or "when
// the second epoch starts" failed in training. Whose loop it is comes from the framework the paste names
// (HF Trainer's API, Lightning, Keras); what the loop keeps from the sentence ("appended to a list",
// "concatenated on the GPU"). Every pattern is bounded and applied per line: linear in the paste's length.
import type { PhaseVerdict } from '../phase.js';

const MAX_LINES = 400;
const MAX_LINE = 600;
const QUOTE_CHARS = 140;

// The failure named in words or by its message.
const FAILURE = /out of memory|\bOOM\b|OutOfMemory|memory (?:error|exception)|CUDA error|显存(?:不足|不够|爆|溢出|占满)|爆显存|内存不足/i;
// The phase named at the failure: "during / in / while / on / when" evaluation, validation, eval, predict(ion).
// "after validation" and "before validation" are left out: the failure is then in the training around it.
const EVAL_WORDS =
  /\b(?:during|in|while|on|upon|when|at)\s{1,3}(?:(?:computing|running|doing|the|an?|my)\s{1,3}){0,2}(?:validation|validating|evaluation|evaluating|eval|predicting|prediction)(?:_step|_epoch_end|_loop)?\b|\b(?:when|while)\s{1,3}(?:I\s{1,3})?(?:run(?:ning)?\s{1,3})?(?:validat|evaluat)\w{0,4}\b|\b(?:validation|evaluation|eval|valid|val)\s{1,3}(?:step|loop|phase|stage|epoch|pass)\b|\btrainer\.(?:evaluate|predict)\(\)|(?:验证|评估|评测|预测)(?:时|的时候|阶段|过程|集上)/i;
// The failure placed after or outside the evaluation ("after validation", "the next epoch"): not an evaluation OOM.
const AFTER_EVAL = /\bafter\s{1,3}(?:the\s{1,3})?(?:first\s{1,3})?(?:validation|evaluation|eval)\b[^\n]{0,80}\b(?:epoch|training)\b|验证(?:之后|后|结束后)/i;

// Whose evaluation loop: HF Trainer's API or its gathering, Lightning, Keras; else the script's own.
const HF =
  /\b(?:Seq2Seq)?Trainer\b[^\n]{0,40}\b(?:evaluate|predict)\b|\btrainer\.(?:evaluate|predict)\(|\b(?:evaluation_loop|prediction_loop|nested_concat|eval_accumulation_steps|compute_metrics)\b/;
const LIGHTNING = /\bpytorch_lightning\b|\blightning\.pytorch\b|\bLightningModule\b|\bPyTorch Lightning\b/;
const KERAS = /\bkeras\b|\bmodel\.(?:evaluate|predict)\([^\n)]{0,80}\bbatch_size\b/i;
// HF Trainer concatenating predictions on the device: named by its function or in words.
const GATHER_WORDS =
  /\bnested_concat\b|\b(?:aggregat|concatenat|accumulat|gather)\w{0,4}\b[^\n]{0,40}\bpredictions?\b[^\n]{0,40}\bGPU\b|\bpredictions?\b[^\n]{0,60}\b(?:aggregat|concatenat|accumulat|gather)\w{0,4}\b[^\n]{0,40}\bGPU\b/i;
// A script's loop keeping every batch's outputs: appended, added or stacked into a list or tensor.
const COLLECT_WORDS =
  /\b(?:outputs?|logits|predictions?|preds|results?|features|embeddings)\b[^\n]{0,80}\b(?:(?:are|is|get|gets|being)\s{1,3})?(?:appended|added|stored|kept|collected|stacked|concatenated)\s{1,3}(?:to|in|into)\s{1,3}(?:a\s{1,3})?(?:list|tensor)\b/i;

function* lines(text: string): Generator<string> {
  let start = 0;
  for (let n = 0; n < MAX_LINES && start < text.length; n++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end - start <= MAX_LINE) yield text.slice(start, end);
    start = end + 1;
  }
}

/** The evaluation phase a sentence of the paste names at its failure, with that sentence as the evidence. */
export function reportedPhase(text: string): PhaseVerdict | undefined {
  let said: string | undefined;
  let gathers = false;
  let collects = false;
  let hf = false;
  let lightning = false;
  let keras = false;
  for (const line of lines(text)) {
    if (!said && FAILURE.test(line) && EVAL_WORDS.test(line) && !AFTER_EVAL.test(line)) said = line.trim();
    if (GATHER_WORDS.test(line)) gathers = true;
    if (COLLECT_WORDS.test(line)) collects = true;
    if (HF.test(line)) hf = true;
    if (LIGHTNING.test(line)) lightning = true;
    if (KERAS.test(line)) keras = true;
  }
  if (!said) return undefined;
  const frame = `"${said.length > QUOTE_CHARS ? said.slice(0, QUOTE_CHARS) + '…' : said}"`;
  const loop: PhaseVerdict['evalLoop'] = hf ? 'hf' : lightning ? 'lightning' : 'plain';
  const verdict: PhaseVerdict = { phase: 'eval', frame, evalLoop: loop };
  if (loop === 'hf' && gathers) verdict.gathersPredictions = true;
  if (loop === 'plain' && collects) verdict.evalCollects = true;
  if (keras) verdict.evalKeras = true;
  return verdict;
}
