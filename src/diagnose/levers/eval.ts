// The evaluation levers (issue 23): an OOM in evaluation, validation or predict is fixed by what that
// phase keeps, never by the training batch. HF Trainer keeps every eval batch's logits on the GPU until
// evaluation ends unless eval_accumulation_steps moves them (preprocess_logits_for_metrics shrinks them,
// prediction_loss_only drops them); a script's own loop keeps every forward's graph without no_grad /
// inference_mode, and every output it collects as a GPU tensor; Lightning and Keras already run without
// gradients, so what validation_step keeps and the evaluation batch remain. The evaluation batch is a
// lever only when the paste states it and it is above 1.

// The evaluation batch as HF TrainingArguments, timm, Lightning data modules and scripts name it:
// "--per_device_eval_batch_size 16", "per_device_eval_batch_size=16," (a TrainingArguments dump),
// "eval_batch_size: 8" (YAML), "-vb 32" / "--validation-batch-size 32" (timm), "val_batch_size=4".
// Anchored at a flag or a line/field start, bounded: linear.
import { newIncident, type Incident } from '../incident/index.js';
import { t, type Locale } from '../../core/i18n.js';
import { LARGE_INPUT_PIXELS } from '../incident/input.js';
import { evalBatchSaidToFit, predictWithGenerate } from './eval-said.js';
import { readEvalOverSet, readEvalPassGrowth, tfWholeArray } from './eval-over-set.js';
import { readYoloTrainVal, ultralyticsValForm } from './eval-yolo.js';
import { readCaffeTestNet } from './caffe-test.js';
import { readEvalPostWork } from './eval-post.js';
import { readVolatileRemoved } from './volatile.js';
import { readFlairGradEmbed } from './library-grad-default.js';
import { readEvalAboveTrain } from './eval-above-train.js';
import { readDetachedForward } from './forward-graph.js';
const EVAL_BATCH =
  /(?:^|[\s,({'"])(?:--)?((?:per_device_eval|per_gpu_eval|eval|val|valid|validation|test)[-_]batch[-_]size|-vb)(?:[ \t]{1,4}|[ \t]{0,2}[=:][ \t]{0,2})['"]?(\d{1,5})\b/gim;
// A line that states the evaluation's batch in words or a form the settings do not read ("for evaluation with
// batch_size of 4", "eval bs 2", "验证的batch_size设为2"): the evaluation batch is then the paste's, not a framework
// default. Bounded, per line.
const EVAL_BATCH_NAMED =
  /\b(?:eval\w{0,8}|valid\w{0,6}|val|test\w{0,3}|predict\w{0,4}|inference)\b[^\n]{0,60}\b(?:batch(?:es|[ _-]?size)?|bs)\b\W{0,12}(?:of\s{1,3}|to\s{1,3}|is\s{1,3})?\d|\b(?:batch(?:[ _-]?size)?|bs)\W{0,6}\d{1,5}\b[^\n]{0,60}\b(?:eval\w{0,8}|valid\w{0,6}|val|test\w{0,3}|predict\w{0,4}|inference)\b|(?:验证|评估|测试|预测|推理)[^\n]{0,20}batch[^\n]{0,12}\d/i;
const EVAL_ACCUMULATION = /(?:^|[\s,({'"])(?:--)?eval_accumulation_steps['"]?(?:[ \t]{1,4}|[ \t]{0,2}[=:][ \t]{0,2})['"]?(None|\d{1,6})\b/gim;
// Code under no_grad / inference_mode, as the paste shows it (a decorator, a with-block, set_grad_enabled(False)).
const NO_GRAD = /(?:@|\bwith\s{1,3})torch\.(?:no_grad|inference_mode)\(\)|\btorch\.set_grad_enabled\(\s{0,2}False\s{0,2}\)/;

const NO_GRAD_GLOBAL = new RegExp(NO_GRAD.source, 'g');
const NEGATED = /(?:\bwithout|\bnot|\bnever|\bno\b|\bmissing|\bforgot\w{0,3}|没有|没|未|不|忘|缺)[^\n]{0,24}$/i;
// PyTorch's own warning quotes the call it asks for ("volatile was removed and now has no effect. Use `with
// torch.no_grad():` instead"): it says the code does not run under it.
const QUOTED_BY_WARNING = /volatile was removed/;
/** The first no_grad / inference_mode call the paste shows in code, skipping ones a sentence says are missing. */
function shownNoGrad(text: string): string | undefined {
  NO_GRAD_GLOBAL.lastIndex = 0;
  for (let m = NO_GRAD_GLOBAL.exec(text), n = 0; m && n < 50; m = NO_GRAD_GLOBAL.exec(text), n++) {
    const lineStart = text.lastIndexOf('\n', m.index) + 1;
    const before = text.slice(Math.max(lineStart, m.index - 80), m.index);
    if (!NEGATED.test(before.slice(-40)) && !QUOTED_BY_WARNING.test(before)) {
      // A shared global pattern: its position must not carry over to the next paste the bot reads.
      NO_GRAD_GLOBAL.lastIndex = 0;
      return m[0];
    }
  }
  NO_GRAD_GLOBAL.lastIndex = 0;
  return undefined;
}

// Frameworks whose evaluation runs without gradients already, by their fixed vocabulary: PaddlePaddle's own OOM message
// and package names (its suites evaluate under paddle.no_grad), OpenMMLab's packages, config words and test loops (its
// test_step / single_gpu_test run without gradients). There no_grad is no lever: what remains is the evaluation batch or
// one evaluation input's size.
// Sequence-to-sequence toolkits validate periodically inside their own trainer, under no_grad, with a validation batch of
// their own (OpenNMT-py's -valid_batch_size, fairseq's --batch-size-valid / --max-tokens-valid): that setting is the lever.
// TensorFlow's exception class or its allocation message (op_kernel.cc), in any version's wording.
const TF_EXCEPTION = /\bResourceExhaustedError\b|\bOOM when allocating tensor\b/;

const EVAL_ENGINES: [RegExp, string, string?][] = [
  [/Out of memory error on GPU \d{1,3}\. Cannot allocate|\bppdet\b|\bpaddle(?:paddle|ocr|det|detection|seg|nlp|3d)?\b/i, 'PaddlePaddle'],
  [/\bmm(?:det|seg|cv|engine|ocr|rotate|pose|3d|action|pretrain|track)\b|\bsamples?[ _]per[ _]gpu\b|\bsingle_gpu_test\b|\bEpoch\((?:val|test)\)/i, 'OpenMMLab'],
  [/\bonmt[\\/]|\bonmt_train\b|\bOpenNMT-py\b/, 'OpenNMT-py', '-valid_batch_size'],
  [/\bfairseq[\\/]|\bfairseq-train\b/, 'fairseq', '--batch-size-valid / --max-tokens-valid'],
  // Caffe's test net runs forward only, by its own data layer's batch: glog's CUDA_CHECK ("Check failed: error ==
  // cudaSuccess (2 vs. 0)  out of memory"), the solver's "Iteration N, Testing net (#0)", its .prototxt net files.
  [
    /\berror == cudaSuccess\b|\bTesting net \(#\d|\.prototxt\b|\bcaffe\b/i,
    'Caffe',
    "batch_size of the test net's data layer (test.prototxt, phase TEST), raising test_iter so that test_iter × batch_size still covers the test set",
  ],
];

// An input's shape stated as a tuple beside the word that says what it is ("the dimension (1025, 2049)", "image size
// is [1024, 2048]", "resolution of (2160, 3840)"): the input-size reader (levers/input-size.ts) reads keyed settings and
// WxH; an evaluation report often gives the shape this way. Bounded, linear.
const SHAPE_TUPLE = /\b(?:dimensions?|size|shape|resolution)\s{0,3}(?:(?:is|of|=|:)\s{0,3})?[([]\s{0,2}(\d{3,5})\s{0,2},\s{0,2}(\d{3,5})\s{0,2}[)\]]/i;

/** The last match's groups of a global pattern (settings printed later win, as in settings.ts). */
function last(text: string, re: RegExp): RegExpExecArray | undefined {
  let found: RegExpExecArray | undefined;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) found = m;
  return found;
}

/** The evaluation's own settings stated in the paste (text already bounded by the caller). */
export function readEvalSettings(text: string): Incident {
  const incident: Incident = newIncident();
  const batch = last(text, EVAL_BATCH);
  if (batch && Number(batch[2]) >= 1) {
    incident.eval.evalBatch = Number(batch[2]);
    incident.eval.evalBatchSetting = `${batch[1]} ${batch[2]}`;
  }
  if (EVAL_BATCH_NAMED.test(text)) incident.eval.evalBatchNamed = true;
  const shape = SHAPE_TUPLE.exec(text);
  if (shape) {
    const [h, w] = [Number(shape[1]), Number(shape[2])];
    incident.eval.evalInputPixels = h * w;
    incident.eval.evalInputSetting = shape[0].trim();
    incident.eval.evalInputNext = `${Math.round(h / 2)}x${Math.round(w / 2)}`;
  }
  const engine = EVAL_ENGINES.find(([re]) => re.test(text));
  if (engine) incident.eval.evalEngine = engine[1];
  if (engine?.[2]) incident.eval.evalEngineBatchFlag = engine[2];
  const acc = last(text, EVAL_ACCUMULATION);
  if (acc && acc[1] !== 'None') incident.eval.evalAccumulation = Number(acc[1]);
  // Code shown under no_grad, not a sentence saying it is missing ("runs without `with torch.no_grad()`", "没有加 no_grad").
  const noGrad = NO_GRAD.test(text) ? shownNoGrad(text) : undefined;
  if (noGrad) incident.eval.noGradShown = noGrad;
  if (predictWithGenerate(text)) incident.eval.evalGenerates = true;
  const overSet = readEvalOverSet(text);
  if (overSet) incident.eval.evalOverSetSaid = overSet;
  const passGrowth = readEvalPassGrowth(text);
  if (passGrowth) incident.eval.evalPassGrowth = passGrowth;
  // TensorFlow's own exception: Keras / TF ran the evaluation, which keeps no autograd graph, whatever frame shows it.
  if (TF_EXCEPTION.test(text)) incident.eval.evalKeras = true;
  const yoloVal = readYoloTrainVal(text);
  const caffeTest = readCaffeTestNet(text);
  if (caffeTest) incident.eval.caffeTestNet = caffeTest;
  if (yoloVal) incident.eval.evalYoloVal = yoloVal;
  const post = readEvalPostWork(text);
  if (post.nms) incident.eval.evalNms = post.nms;
  if (post.metric) incident.eval.evalMetricState = post.metric;
  if (post.faiss) incident.stack.faissAlloc = post.faiss;
  const volatile = readVolatileRemoved(text);
  if (volatile) incident.eval.volatileRemoved = volatile;
  const flair = readFlairGradEmbed(text);
  if (flair) incident.eval.flairGradEmbed = flair;
  const aboveTrain = readEvalAboveTrain(text);
  if (aboveTrain) incident.eval.evalAboveTrainSaid = aboveTrain;
  const detached = readDetachedForward(text);
  if (detached) incident.eval.detachedForward = detached;
  const wholeArray = tfWholeArray(text);
  if (wholeArray) incident.eval.evalWholeArray = wholeArray;
  const fits = evalBatchSaidToFit(text);
  if (fits) {
    incident.eval.evalBatchFits = fits.batch;
    incident.eval.evalBatchFitsSaid = fits.said;
  }
  return incident;
}

const inEval = (f: Incident) => f.phase.name === 'eval';

/**
 * Share of the card one request must reach to be one input's tensor rather than a layer's block among kept graphs. Not
 * where the paste sets an evaluation batch above 1: that request may be the batch's.
 */
const ONE_INPUT_SHARE = 0.25;
/**
 * The evaluation failed on one request that is a large share of the card: kept graphs fill a card in
 * layer-sized blocks, so a single request this large is one input far larger than training's (a whole
 * image instead of a crop, a very long sequence). Not HF Trainer's: its gathering makes one large request too.
 */
export function evalOneLargeInput(f: Incident): boolean {
  const card = f.figures.totalCapacityMiB ?? f.card.gpuMemoryMiB ?? f.card.statedGpuMemoryMiB ?? f.card.gpuModelMemoryMiB;
  return (
    inEval(f) &&
    f.phase.evalLoop !== 'hf' &&
    f.eval.evalKeras !== true &&
    f.figures.triedAllocMiB !== undefined &&
    card !== undefined &&
    !(f.eval.evalBatch !== undefined && f.eval.evalBatch > 1) &&
    f.figures.triedAllocMiB >= ONE_INPUT_SHARE * card
  );
}

/** HF Trainer's evaluation generated (predict_with_generate): beams, new tokens and the eval batch. */
export const evalHfGenerates = (f: Incident) => inEval(f) && f.phase.evalLoop === 'hf' && f.eval.evalGenerates === true && f.phase.gathersPredictions !== true;
/**
 * HF Trainer's evaluation forward, its predictions not yet moved off the GPU: eval_accumulation_steps
 * first (unless the paste already sets it), with preprocess_logits_for_metrics / prediction_loss_only.
 */
export const evalHfKeepsLogits = (f: Incident) =>
  inEval(f) && f.phase.evalLoop === 'hf' && f.phase.gathersPredictions !== true && f.eval.evalGenerates !== true && f.eval.evalAccumulation === undefined;
/** The same with eval_accumulation_steps already set: the predictions move; the eval batch or the inputs remain. */
export const evalHfAccumulates = (f: Incident) =>
  inEval(f) && f.phase.evalLoop === 'hf' && f.phase.gathersPredictions !== true && f.eval.evalGenerates !== true && f.eval.evalAccumulation !== undefined;
/** A script's own loop collected outputs on the GPU (the failing line concatenates or appends them). */
export const evalPlainCollects = (f: Incident) =>
  inEval(f) && f.phase.evalLoop === 'plain' && f.eval.evalKeras !== true && f.eval.evalCollects === true && !evalOneLargeInput(f);
/** A script's own loop whose code the paste shows under no_grad / inference_mode: graphs are not what piles up. */
export const evalPlainNoGradShown = (f: Incident) =>
  inEval(f) &&
  f.phase.evalLoop === 'plain' &&
  f.eval.evalKeras !== true &&
  f.eval.evalCollects !== true &&
  f.eval.noGradShown !== undefined &&
  !evalOneLargeInput(f);
/**
 * A script's own loop with no sign of no_grad: every forward keeps its graph. Not where the report's own experiment says
 * the same evaluation ran at a smaller input and failed at a larger one (levers/smaller-input.ts): the input decides there.
 */
export const evalPlainNoGrad = (f: Incident) =>
  inEval(f) &&
  f.phase.evalLoop === 'plain' &&
  f.eval.evalKeras !== true &&
  f.eval.evalCollects !== true &&
  f.eval.noGradShown === undefined &&
  f.input.smallerWorked === undefined &&
  !evalOneLargeInput(f);
/**
 * One large input stated for the evaluation (an image of LARGE_INPUT_PIXELS or more: levers/input-size.ts) at a batch of
 * 1 or 2 or none stated: its activations grow with its pixels and halving cannot shrink it, so the input's size is the
 * lever (tiles, sliding window, a smaller test size). Not HF Trainer's gathering, Keras (its batch-1 text says the same in
 * its own terms), outputs collected, or gradients said on.
 */
export const evalStatedLargeInput = (f: Incident) => {
  if (!inEval(f) || f.phase.evalLoop === 'hf' || f.eval.evalKeras === true || f.eval.evalCollects === true || evalGradsOnStated(f)) return false;
  const pixels = f.input.inputPixels ?? f.eval.evalInputPixels;
  if (pixels === undefined || pixels < LARGE_INPUT_PIXELS) return false;
  const batch = evaluatedBatch(f);
  return batch === undefined || batch <= 2;
};
/**
 * A framework's own evaluation that runs without gradients (EVAL_ENGINES), with no evaluation batch above 1 stated and
 * no large input stated: one evaluation input at full size is what fills the card (a stated evaluation batch above 1
 * is halved instead: eval_batch_halves).
 */
export const evalEngineInput = (f: Incident) =>
  inEval(f) &&
  f.phase.evalLoop === 'plain' &&
  f.eval.evalEngine !== undefined &&
  f.eval.evalEngineBatchFlag === undefined &&
  f.eval.evalKeras !== true &&
  !(f.eval.evalBatch !== undefined && f.eval.evalBatch > 1) &&
  !evalGradsOnStated(f) &&
  !evalStatedLargeInput(f);
/**
 * Ultralytics' validation during training (YOLOv5's train.py, the YOLOv8+ trainer) builds its loader at twice the
 * training batch and runs under no_grad (smart_inference_mode): what the validation adds is that doubled batch, so the
 * training batch it follows (or validating apart, at a smaller batch) is the lever, not no_grad. Not with a large input
 * stated at a small batch (the input's size then), nor where the report says gradients are on.
 */
export const evalUltralyticsVal = (f: Incident) =>
  inEval(f) &&
  (f.run.tool === 'ultralytics' || f.run.tool === 'yolov5' || ultralyticsValForm(f)) &&
  f.eval.evalKeras !== true &&
  !evalGradsOnStated(f) &&
  !evalStatedLargeInput(f);
/** Keras evaluate / predict: no graph to drop; its batch_size is the lever. */
export const evalKeras = (f: Incident) => inEval(f) && f.eval.evalKeras === true;
/**
 * The report says the forward ran with gradients on ("without torch.no_grad()", "without turning gradient
 * computations off"): every evaluation forward keeps its graph, so no_grad / inference_mode comes first, quoting it.
 * Not HF Trainer's loop (its prediction_step already runs without gradients) nor Keras (no autograd graph).
 */
export const evalGradsOnStated = (f: Incident) => inEval(f) && f.eval.gradsOnStated !== undefined && f.phase.evalLoop !== 'hf' && f.eval.evalKeras !== true;
/** The evaluation fed the whole evaluation set as one batch: splitting it into batches is the lever. */
export const evalWholeSet = (f: Incident) =>
  inEval(f) && f.eval.evalWholeSet === true && f.phase.evalLoop !== 'hf' && f.eval.evalKeras !== true && !evalGradsOnStated(f);
/**
 * The evaluation batch is larger than the training batch that ran (both stated): evaluation computes no gradients,
 * yet a batch several times training's can need more than a training step; bring it down first. Not while HF
 * Trainer gathers predictions (what piles up there is the evaluation set, not one batch).
 */
export const evalBatchAboveTrain = (f: Incident) =>
  inEval(f) &&
  evalBatchOf(f) !== undefined &&
  f.run.batch !== undefined &&
  evalBatchOf(f)! > f.run.batch &&
  f.phase.gathersPredictions !== true &&
  !evalGradsOnStated(f);
/**
 * HF TrainingArguments' per_device_eval_batch_size when a run sets none: the Trainer evaluates at 8 whatever the
 * training batch is, so an unset evaluation batch is 8, not the training batch.
 */
const HF_DEFAULT_EVAL_BATCH = 8;
/** The evaluation batch: stated, else HF Trainer's default when its loop ran the evaluation and no line states one. */
const evalBatchOf = (f: Incident) =>
  f.eval.evalBatch ?? (f.phase.evalLoop === 'hf' && !f.eval.evalBatchOne && !f.eval.evalBatchNamed ? HF_DEFAULT_EVAL_BATCH : undefined);
/** The batch that evaluated, as far as the paste states it: the evaluation's own (HF's default), else the one batch it states. */
const evaluatedBatch = (f: Incident) => evalBatchOf(f) ?? (f.eval.evalBatchOne ? 1 : f.run.batchDefaultOf === undefined ? f.run.batch : undefined);
/**
 * The evaluation failed at batch 1 (stated, or the leading dimension of TensorFlow's failed tensor): halving cannot
 * help. For Keras / TensorFlow (no graph kept) one input is too large: tile or shrink it. For a PyTorch loop the
 * experiment that decides: under no_grad / inference_mode if it is not already; if one example still does not fit,
 * that input is too large. Not HF Trainer's gathering, outputs collected, or a stated cause that comes first.
 */
export const evalAtBatchOne = (f: Incident) =>
  inEval(f) &&
  evaluatedBatch(f) === 1 &&
  f.eval.evalBatchFits === undefined &&
  f.phase.gathersPredictions !== true &&
  f.eval.evalCollects !== true &&
  !evalGradsOnStated(f) &&
  !evalWholeSet(f) &&
  !evalOneLargeInput(f);
export const evalAtBatchOneKeras = (f: Incident) => evalAtBatchOne(f) && f.eval.evalKeras === true;
export const evalAtBatchOneTorch = (f: Incident) => evalAtBatchOne(f) && f.eval.evalKeras !== true;

/** The evaluation batch is a lever: stated in the paste and above 1. */
export const evalBatchHalves = (f: Incident) => inEval(f) && f.eval.evalBatch !== undefined && f.eval.evalBatch > 1;

/** The reply's figure for a halved evaluation batch, and HF's default evaluation batch named where the paste sets none. */
export function evalLeverWords(f: Incident, loc?: Locale): void {
  // A shape the evaluation report states as a tuple gives the stated-input lever its words.
  if (evalStatedLargeInput(f) && f.input.inputPixels === undefined && f.eval.evalInputSetting !== undefined) {
    f.input.inputSizeSetting = f.eval.evalInputSetting;
    f.input.inputSizeNext = f.eval.evalInputNext;
  }
  if (f.eval.evalBatch === undefined && evalBatchAboveTrain(f)) f.eval.evalBatchSetting = t(loc, 'lever.eval.hfDefaultBatch', { batch: HF_DEFAULT_EVAL_BATCH });
  if (f.eval.evalBatch !== undefined && f.eval.evalBatch > 1) f.eval.evalBatchNext = Math.max(1, Math.floor(f.eval.evalBatch / 2));
  // The frames' evidence of a computation over the set is quoted before a sentence's.
  if (f.eval.evalOverSet !== undefined) f.eval.evalOverSetSaid = f.eval.evalOverSet;
  if (evalOneLargeInput(f)) {
    const card = f.figures.totalCapacityMiB ?? f.card.gpuMemoryMiB ?? f.card.statedGpuMemoryMiB ?? f.card.gpuModelMemoryMiB;
    f.eval.evalRequestShare = `${Math.round((100 * f.figures.triedAllocMiB!) / card!)}%`;
  }
}
