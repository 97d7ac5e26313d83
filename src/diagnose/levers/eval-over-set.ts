// An evaluation whose memory is what it computes or keeps over the whole set after the model's forwards (issue 23): a
// score or similarity matrix of every query against every candidate (retrieval, word translation, zero-shot pairs), every
// batch's outputs concatenated on the device (Keras predict's final concatenation, a script's torch.cat of the set),
// metrics over all predictions. It grows with the set, not with a batch, so neither the batch nor no_grad is the lever:
// keep each batch's outputs on the CPU and compute over the set in chunks. Evidence, each in a fixed form:
// - the traceback: frames run inside the evaluation's own frame, none of them a model call (eval-frames.ts);
// - the pass's progress bar complete (tqdm "100%|…| N/N", Keras "N/N [====") or past half of at least 100 batches, as
//   the last bar before the failure: each batch's forward fit, so what fails is what the pass keeps across batches;
// - the report saying the failure came while concatenating or gathering the set's predictions or outputs.
// TensorFlow's failed tensor whose leading dimension is a data set's length, not a batch, is the whole array put on the
// device (tfWholeArray). Every pattern is bounded and applied per line: linear in the paste's length.
import type { Incident } from '../incident/index.js';
import { boundedLines } from '../lines.js';
import { evalAboveTrainSaid } from './eval-above-train.js';
import { forwardKeepsGraph } from './forward-graph.js';
export { evalWorkAfterForward } from './eval-frames.js';

const MAX_LINES = 20_000;
const MAX_LINE = 600;
const QUOTE_CHARS = 120;

// A progress bar's count: tqdm's "100%|██████| 3125/3125 [03:27<00:00" or "| 20/76 [", Keras's "1532/1532 [=====".
const TQDM_BAR = /(\d{1,3})%\|[^|\n]{0,200}\|\s{0,3}(\d{1,9})\/(\d{1,9})\b/;
const KERAS_BAR = /^\s{0,8}(\d{1,9})\/(\d{1,9})\s{1,3}\[[=>.]{3,}/;
// A bar's label (the text before its count) that names an evaluation's pass over the set, or none: a bar that names
// anything else (an epoch, training, loading checkpoint shards, a dataset map) is not the evaluation's pass.
const PASS_LABEL =
  /^\W{0,8}$|^[^\n]{0,40}\b(?:eval\w{0,6}|valid\w{0,6}|val|test\w{0,3}|predict\w{0,4}|infer\w{0,5}|batches|encod\w{0,4}|embed\w{0,6}|scor\w{0,4}|retriev\w{0,4}|rank\w{0,3})\b[^\n]{0,20}$|(?:评估|验证|测试|推理|预测)/i;
const NOT_PASS = /\b(?:epoch|train\w{0,3}|load\w{0,3}|download\w{0,3}|shards?|map|tokeniz\w{0,4}|fetch\w{0,3}|extract\w{0,3})\b|训练|加载/i;
// The failure's line: a framework's OOM message, the report naming one, or the traceback the run died with.
const FAILURE_LINE =
  /^\s{0,4}Traceback \(most recent call last\)|out of memory|OutOfMemoryError|\bOOM\b|ResourceExhausted|RESOURCE_EXHAUSTED|显存(?:不足|不够|爆|溢出)|爆显存/i;
// The report places the failure in concatenating or gathering the set's outputs ("when it is concating the predictions
// together", "while gathering all embeddings", "拼接预测结果时").
const GATHER_SAID =
  /\b(?:concat\w{0,8}|gather\w{0,4}|stack(?:s|ed|ing)?|merg(?:e|es|ed|ing)|aggregat\w{0,5})\b[^\n]{0,30}\b(?:the\s{1,3}|all\s{1,3}(?:the\s{1,3})?)?(?:predictions|outputs|results|embeddings|logits|features|scores)\b|\b(?:inputs|outputs|predictions|preds|logits|results|embeddings|features|labels)\b[^\n]{0,40}\b(?:stored|kept|held|accumulated)\b[^\n]{0,12}?[\s_*]on\s{1,3}(?:the\s{1,3})?_?(?:GPU|device|CUDA)(?![A-Za-z])|(?:拼接|合并|汇总|收集)[^\n]{0,10}(?:预测|输出|结果|特征|向量)/i;

// A pass that failed after this many of its batches, and this share of them, had run: each batch fit, what failed is kept across them.
const LATE_BATCHES = 100;
const LATE_SHARE = 0.5;

/** The evidence in words or progress lines that the failure came after every batch of the evaluation's pass ran. */
export function readEvalOverSet(text: string): string | undefined {
  let lastBar: { done: boolean; line: string } | undefined;
  let found: string | undefined;
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    const said = found ? null : GATHER_SAID.exec(line);
    if (said) found = quote(line, said.index);
    const bar = TQDM_BAR.exec(line) ?? KERAS_BAR.exec(line);
    if (bar) {
      const [n, of] = bar.length === 4 ? [Number(bar[2]), Number(bar[3])] : [Number(bar[1]), Number(bar[2])];
      // tqdm redraws one bar many times on a line: the last count on the line is what it reached.
      const counts = [...line.matchAll(/\|\s{0,3}(\d{1,9})\/(\d{1,9})\b/g)].slice(-1)[0];
      const reached = counts ? Number(counts[1]) : n;
      // Done, or far into the pass: a failure after most of the set's batches ran is not one batch's forward.
      const late = reached === of || (reached >= LATE_BATCHES && reached >= LATE_SHARE * of);
      const label = line.slice(0, Math.max(0, bar.index)).slice(-80);
      lastBar = PASS_LABEL.test(label) && !NOT_PASS.test(label) ? { done: of > 1 && late, line } : undefined;
      continue;
    }
    if (FAILURE_LINE.test(line) && lastBar?.done) found ??= quote(lastBar.line);
  }
  return found;
}

// TensorFlow's failed tensor: "OOM when allocating tensor with shape[160000,64,64,1] and type double". TF 1.x before
// 1.5 printed the shape alone (allocate_temp's `ResourceExhausted("OOM when allocating tensor with shape",
// shape.DebugString())`), so the type is optional and then TensorFlow's default, float.
const TF_SHAPE = /OOM when allocating tensor (?:with|of) shape ?\[(\d{1,9})((?:, ?\d{1,7}){1,6})\](?: and type (\w{1,12}))?/;
/**
 * A leading dimension no batch reaches (above 4096, where settings.ts stops reading it as the batch) on a tensor of 3
 * dimensions or more: the data set's own length. Keras turns NumPy arrays passed to fit / evaluate / predict into one
 * tensor on the device (validation_split slices it there, a GatherV2), so the whole array is what does not fit.
 */
const MAX_BATCH_ROWS = 4096;
export function tfWholeArray(text: string): string | undefined {
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    const m = TF_SHAPE.exec(line);
    if (!m) continue;
    const dims = m[2].split(',').filter((d) => d.trim()).length + 1;
    if (dims >= 3 && Number(m[1]) > MAX_BATCH_ROWS) return `shape[${m[1]}${m[2].replace(/ /g, '')}] ${m[3] ?? 'float'}`;
  }
  return undefined;
}

/** The line, or QUOTE_CHARS of it around `at` (where the evidence starts), in quotes. */
function quote(line: string, at = 0): string {
  const t = line.trim();
  if (t.length <= QUOTE_CHARS) return `"${t}"`;
  const from = Math.max(0, at - (line.length - line.trimStart().length) - 40);
  return `"${from > 0 ? '…' : ''}${t.slice(from, from + QUOTE_CHARS)}…"`;
}

/**
 * The evaluation failed in what it computes over the set after its forwards (frames or words): not HF Trainer's loop
 * (its own gathering texts say eval_accumulation_steps), not a generating one (its lengths and beams come first), not
 * where the report says gradients were on.
 */
export const evalOverSet = (f: Incident) =>
  f.phase.name === 'eval' &&
  (f.eval.evalOverSet !== undefined || f.eval.evalOverSetSaid !== undefined) &&
  f.phase.evalLoop !== 'hf' &&
  f.phase.gathersPredictions !== true &&
  f.eval.evalGenerates !== true &&
  f.eval.gradsOnStated === undefined;

/** TensorFlow put a whole data array on the device: feeding it in batches from the host is the lever, not the batch. */
export const wholeArrayOnDevice = (f: Incident) => f.eval.evalWholeArray !== undefined;

// Memory told to climb through an inference or evaluation pass over a set ("GPU memory usage keeps growing when performing
// inference on the test set", "推理时显存一直增长"): at a fixed batch, what grows across the pass is what it keeps of each
// batch, the predictions gathered on the device until the end. Growth words and the pass on one line; not training's.
const GROWS =
  /\b(?:keeps?|kept|keeping)\s{1,3}(?:on\s{1,3})?(?:grow|increas|ris|climb|go(?:es|ing)?\s{1,3}up)\w{0,4}|\bcreep\w{0,4}\s{1,3}up\b|\b(?:grow|increas|climb)\w{0,4}\s{1,3}(?:steadily|gradually|continuously|constantly)\b|\b(?:steadily|gradually|continuously|constantly|continu(?:e|es|ed|ing)\s{1,3}(?:to\s{1,3})?)\s{0,3}(?:grow|increas|ris|climb|fill)\w{0,4}|\b(?:grow|increas|ris|climb)\w{0,4}\s{1,3}(?:batch\s{1,3}(?:by|after)\s{1,3}batch|step\s{1,3}by\s{1,3}step|(?:with|after)\s{1,3}(?:each|every)\s{1,3}(?:batch|step|iteration))\b|(?:一直|不断|持续|逐渐)\s{0,2}(?:增长|增加|上涨|上升|变大|累积|递增)/i;
// A pass over a set: a test / validation set named, or the evaluation itself; inference alone may be one request after
// another (a server, a notebook), where a climb with each new input size is the allocator's cache.
const PASS_OVER_SET =
  /\b(?:on|over|through)\s{1,3}(?:the\s{1,3}|a\s{1,3}|my\s{1,3})?(?:whole\s{1,3}|entire\s{1,3})?(?:test|validation|val|eval|evaluation|dev)\s{0,3}(?:set|data(?:set)?|split)\b|\b(?:during|while|when|in|after\s{1,3}(?:beginning|starting|start)|after)\s{1,3}(?:the\s{1,3})?(?:[\w-]{2,20}\s{1,3})?(?:evaluation|evaluating|validation|validating|testing|test\s{1,3}(?:phase|stage|loop|script|mode)|prediction|predicting|do_predict)\b|\b(?:use|run|running|ran)\s{1,3}(?:the\s{1,3})?test\s{1,3}(?:script|mode)\b|\b(?:eval|evaluation|evaluating|evaluate|validation|validating|validate|val|test|testing|predict|prediction)\s{0,2}(?:的时候|时候|时|过程中|阶段)|测试集|验证集|(?:评估|验证|测试|预测|do[_ ]?predict)(?:[/、]\s{0,2}(?:推理|预测|测试))?\s{0,2}(?:时|的时候|过程中|的过程中|阶段)/i;
// A test or evaluation script by its file name ("test_DREAM.py", "eval_model.py"), as a title names the pass it ran.
const TEST_SCRIPT = /\b(?:test|eval|evaluate|predict|inference)(?:_\w{1,30})?\.py\b/i;
const TRAINING_WORDS = /\btrain(?:ing)?\b|训练/i;

// A clause's turn ("training and validation are fine, but during testing the memory climbs", "训练正常，但是测试时显存一直增长"):
// what the line says of training before it is not said of the climb after it.
const CONTRAST = /\b(?:but|however|whereas)\b|但是|但|然而|而/gi;

// A sentence's end inside a line: a report's paragraph is often one line, and what one sentence says of training is not
// said of the climb another sentence tells.
const SENTENCE_END = /[.!?。！？]\s{0,3}/;
const MAX_SENTENCES = 40;

/** The line that tells memory climbing through an inference or evaluation pass over a set, quoted. */
export function readEvalPassGrowth(text: string): string | undefined {
  let titled: boolean | undefined;
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    // The report's first line (an issue's title) names the pass: a climb its body tells is that pass's.
    if (titled === undefined && line.trim()) titled = (PASS_OVER_SET.test(line) || TEST_SCRIPT.test(line)) && !TRAINING_WORDS.test(line);
    if (titled && GROWS.test(line)) {
      const sentence = line.split(SENTENCE_END, MAX_SENTENCES).find((s) => GROWS.test(s) && !TRAINING_WORDS.test(s));
      if (sentence) return quote(sentence);
    }
    if (!GROWS.test(line) || !PASS_OVER_SET.test(line)) continue;
    const clauses = line.split(CONTRAST);
    if (clauses.some((c) => GROWS.test(c) && PASS_OVER_SET.test(c) && !TRAINING_WORDS.test(c))) return quote(line);
  }
  return undefined;
}

type Check = (e: { incident: Incident }) => boolean;
/** The conditions rules name for these levers (conditions.ts spreads them into its table). */
export const EVAL_SET_CONDITIONS: Record<
  'phase_eval_over_set' | 'tf_whole_array' | 'growth_in_eval_pass' | 'eval_above_train_said' | 'forward_keeps_graph',
  Check
> = {
  phase_eval_over_set: ({ incident }) => evalOverSet(incident),
  tf_whole_array: ({ incident }) => wholeArrayOnDevice(incident),
  growth_in_eval_pass: ({ incident }) => incident.eval.evalPassGrowth !== undefined,
  eval_above_train_said: ({ incident }) => evalAboveTrainSaid(incident),
  // A forward run for its output and detached, autograd on (levers/forward-graph.ts).
  forward_keeps_graph: ({ incident }) => forwardKeepsGraph(incident),
};
