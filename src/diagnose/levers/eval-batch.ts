// When the evaluation batch is the evaluation's lever (issue 23): only where no kept graph explains the failure. A
// forward under no_grad (shown in the code or by the decorator's frame) keeps no graph, so the stated evaluation batch
// is what fills the card; the user's own run at a smaller evaluation batch shows it directly; and HF's generating
// evaluation multiplies its KV cache by the evaluation batch before beams and new tokens.
import type { Incident } from '../incident/index.js';
import { evalOneLargeInput, evalHfGenerates } from './eval.js';

const inEval = (f: Incident) => f.phase.name === 'eval';
const batchAboveOne = (f: Incident) => f.eval.evalBatch !== undefined && f.eval.evalBatch > 1;

/**
 * The report says the evaluation runs at a smaller batch (levers/eval-said.ts): the evaluation batch is the lever by the
 * user's own experiment. Not HF Trainer's evaluation that keeps logits (what grows there is the evaluation set, whatever
 * the batch), nor a loop that collects its outputs.
 */
export const evalBatchSaidFits = (f: Incident) =>
  inEval(f) &&
  f.eval.evalBatchFits !== undefined &&
  f.phase.gathersPredictions !== true &&
  f.eval.evalCollects !== true &&
  !(f.phase.evalLoop === 'hf' && f.eval.evalGenerates !== true);

/**
 * A script's own evaluation that runs under no_grad (the code or the decorator's frame shows it) at a stated evaluation
 * batch above 1: no graph is kept, so that batch's activations fill the card. Not outputs collected, nor one input
 * larger than a quarter of the card (its size, not the batch, then).
 */
export const evalBatchNoGrad = (f: Incident) =>
  inEval(f) &&
  f.phase.evalLoop === 'plain' &&
  f.eval.evalKeras !== true &&
  f.eval.noGradShown !== undefined &&
  f.eval.evalCollects !== true &&
  batchAboveOne(f) &&
  !evalOneLargeInput(f);

/** HF Trainer's generating evaluation at a stated evaluation batch above 1: the batch multiplies the KV cache first. */
export const evalHfGeneratesBatch = (f: Incident) => evalHfGenerates(f) && batchAboveOne(f);

/**
 * A script's own evaluation that generates (generate() under its evaluation function): no graph is kept (generate runs
 * under no_grad), and the KV cache grows with the prompts per call, their length and the beams: the prompts per call
 * (the evaluation batch) first, then max_new_tokens and num_beams.
 */
export const evalPlainGenerates = (f: Incident) => inEval(f) && f.phase.evalLoop === 'plain' && f.eval.evalGenerates === true && f.eval.evalKeras !== true;

/**
 * A toolkit's own periodic validation with a validation batch of its own (levers/eval.ts EVAL_ENGINES: OpenNMT-py,
 * fairseq): it runs under no_grad, so no_grad is no lever; its validation batch setting is, unless the paste states one at 1.
 */
export const evalEngineBatch = (f: Incident) =>
  inEval(f) && f.eval.evalEngineBatchFlag !== undefined && f.eval.gradsOnStated === undefined && !(f.eval.evalBatch !== undefined && f.eval.evalBatch <= 1);
