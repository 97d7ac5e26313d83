// Evaluation told to need more GPU memory than training (issue 23, eval class): evaluation computes no gradients, so at
// the same or a smaller batch it should need less than a training step. When the report says evaluation, validation,
// testing or inference uses more (twice, "more than training", 显著大于训练时, or its two figures: 8.8 GB in train(),
// 15.8 GB in eval()), the evaluation forward still records the autograd graph: no_grad / inference_mode comes first, not a
// smaller evaluation batch. Not where the loop is one that already runs without gradients (HF Trainer, Lightning, Keras):
// there what evaluation keeps (gathered predictions) or its batch is the lever. Evidence in fixed vocabulary, per line;
// every pattern is bounded: linear in the paste's length.
import type { Incident } from '../incident/index.js';
import { boundedLines } from '../lines.js';
import { LARGE_INPUT_PIXELS } from '../incident/input.js';
import { ultralyticsValForm } from './eval-yolo.js';

const MAX_LINES = 20_000;
const MAX_LINE = 600;
const QUOTE_CHARS = 140;

const EVAL_WORD = /\b(?:eval\w{0,8}|validat\w{0,4}|valid|val|test(?:ing)?|inference|infer\w{0,4}|predict\w{0,4})\b|验证|评估|推理|测试|预测/i;
const TRAIN_WORD = /\b(?:train\w{0,4}|fit)\b|训练/i;
// "evaluate will cost more CUDA memory than fit", "validation uses twice the memory of training", "inference takes more
// GPU memory than training".
const MORE_THAN_TRAIN_EN =
  /\b(?:eval\w{0,8}|validat\w{0,4}|test(?:ing)?|inference|predict\w{0,4})\b[^\n]{0,60}\b(?:uses?|used|using|takes?|took|needs?|costs?|consumes?|requires?|occupies|occupy)\b[^\n]{0,30}\b(?:more|twice|double|\d(?:\.\d)?\s?(?:x|times))\b[^\n]{0,40}\b(?:than|of|as)\b[^\n]{0,30}\b(?:train\w{0,4}|fit)\b/i;
// "验证时占用显存是训练时的几乎两倍", "推理时占用显存显著大于训练时", "评估的显存比训练还大", "eval() 显存增加了一倍" (doubled).
const MORE_THAN_TRAIN_ZH =
  /(?:验证|评估|推理|测试|预测|eval)[^\n]{0,20}显存[^\n]{0,20}(?:(?:大于|多于|高于|超过)[^\n]{0,4}训练|是[^\n]{0,4}训练[^\n]{0,6}(?:两|2|三|3|几)倍)|(?:验证|评估|推理|测试|预测)[^\n]{0,20}显存[^\n]{0,4}比[^\n]{0,4}训练[^\n低少小]{0,6}(?:大|多|高)|(?:验证|评估|推理|测试|预测|eval)[^\n]{0,20}显存[^\n]{0,30}(?:增加|增长|涨|翻)了?(?:一|两|1|2)倍/i;
// A figure on a line: "8.8g", "15.8 GB", "3447MiB".
const FIGURE = /(\d{1,4}(?:\.\d{1,2})?)\s{0,2}(g|gb|gib|m|mb|mib)\b/i;
/** Share by which the evaluation's figure must exceed training's to be a rise, not noise. */
const ABOVE = 1.2;

function mib(m: RegExpExecArray): number {
  return Number(m[1]) * (/^g/i.test(m[2]) ? 1024 : 1);
}

/** The sentence (or the two figure lines) that says evaluation needs more GPU memory than training, quoted. */
export function readEvalAboveTrain(text: string): string | undefined {
  let trainFigure: { mib: number; line: string } | undefined;
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    const m = MORE_THAN_TRAIN_EN.exec(line) ?? MORE_THAN_TRAIN_ZH.exec(line);
    if (m) return quote(line);
    const figure = FIGURE.exec(line);
    if (!figure) continue;
    const evalLine = EVAL_WORD.test(line);
    const trainLine = TRAIN_WORD.test(line);
    if (trainLine && !evalLine) trainFigure = { mib: mib(figure), line };
    else if (evalLine && !trainLine && trainFigure && mib(figure) >= ABOVE * trainFigure.mib) return `${quote(trainFigure.line)} → ${quote(line)}`;
  }
  return undefined;
}

function quote(line: string): string {
  const t = line.trim();
  return `"${t.length <= QUOTE_CHARS ? t : t.slice(0, QUOTE_CHARS) + '…'}"`;
}

/**
 * The report says evaluation needs more than training, and nothing else in the paste explains it: not a loop that already
 * runs without gradients (HF Trainer, Lightning, Keras, a framework's own evaluation: OpenMMLab, PaddlePaddle's suites,
 * the YOLO family's validation), not code shown under no_grad, not an evaluation input stated larger than a crop (a whole
 * image of LARGE_INPUT_PIXELS or more: its size is the lever then), not outputs gathered over the set.
 */
export const evalAboveTrainSaid = (f: Incident) =>
  f.eval.evalAboveTrainSaid !== undefined &&
  f.phase.evalLoop !== 'hf' &&
  f.phase.evalLoop !== 'lightning' &&
  f.eval.evalKeras !== true &&
  f.eval.evalEngine === undefined &&
  f.eval.evalYoloVal === undefined &&
  f.run.tool !== 'ultralytics' &&
  f.run.tool !== 'yolov5' &&
  !ultralyticsValForm(f) &&
  f.eval.noGradShown === undefined &&
  f.phase.gathersPredictions !== true &&
  f.eval.evalCollects !== true &&
  (f.input.inputPixels ?? f.eval.evalInputPixels ?? 0) < LARGE_INPUT_PIXELS;
