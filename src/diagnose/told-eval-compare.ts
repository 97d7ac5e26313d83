// The card's memory told larger in evaluation than in training (issue 23, the evaluation class): "推理时占用显存显著大于
// 训练时", "验证时占用显存是训练时的两倍", "训练时只占了50G，验证时直接到70G", "eval uses twice the GPU memory of training",
// "more memory during validation than during training". At the same model and batch, an evaluation forward needs less
// than a training step (no gradients, no optimizer state): one that needs more keeps what training frees, most often
// every forward's autograd graph (no no_grad), so the account is the card's failure placed in evaluation, whose levers
// the eval modules choose. Read on prose lines only (told-failure.ts), a comparison across a line and the one before
// it ("在model.train() 显存占用是8.8g" then "在model.eval()显存直接增加到15.8g"). Bounded, linear.
const EVAL = /验证|评估|评测|推理|测试时|预测|\beval(?:uation|uating)?\b|\bvalidat(?:ion|ing)\b|\binference\b|\.eval\(\)/i;
const TRAIN = /训练|\btrain(?:ing)?\b|\.train\(\)/i;
const MEMORY = /显存|\b(?:GPU|CUDA|VRAM|memory|mem)\b/i;
const EVAL_SRC = EVAL.source;
const TRAIN_SRC = TRAIN.source;
// Evaluation first, then a ratio or a comparative against training.
const RATIO = String.raw`(?:两倍|二倍|一倍|翻倍|几倍|\d(?:\.\d)?\s{0,2}倍|twice|double[sd]?|\d(?:\.\d)?\s{0,2}(?:x|times)\b)`;
const COMPARATIVE = String.raw`(?:大于|多于|高于|超过|远超|more\s{1,3}than|larger\s{1,3}than|higher\s{1,3}than|greater\s{1,3}than|bigger\s{1,3}than)`;
const EVAL_THEN_TRAIN = new RegExp(
  String.raw`(?:${EVAL_SRC})[^\n]{0,60}?(?:${RATIO}[^\n]{0,40}?(?:${TRAIN_SRC})|${COMPARATIVE}[^\n]{0,20}?(?:${TRAIN_SRC})|(?:${TRAIN_SRC})[^\n]{0,20}?(?:的|of)?[^\n]{0,6}?${RATIO})`,
  'i',
);
// The Chinese comparative: "测试时占用显存比训练时占用显存高", "测试比训练要多占1000M左右的显存" (A 比 B 高/多/大; "比训练时低很多" is lower).
const EVAL_ABOVE_ZH = new RegExp(String.raw`(?:${EVAL_SRC})[^\n]{0,30}?比[^\n]{0,12}?(?:${TRAIN_SRC})[^\n低少小]{0,16}?(?:高|多|大)`, 'i');
// "more (GPU) memory during evaluation than during training"
const MORE_IN_EVAL = new RegExp(
  String.raw`\bmore\s{1,3}(?:GPU\s{1,3}|CUDA\s{1,3})?memory\s{1,3}(?:in|during|for|at|on)\s{1,3}(?:the\s{1,3})?(?:${EVAL_SRC})[^\n]{0,30}?\bthan\b[^\n]{0,20}?(?:${TRAIN_SRC})`,
  'i',
);
// The card's memory surging as evaluation starts ("验证时显存飙升20G", "GPU memory spikes during validation").
const SURGE = /飙升|暴涨|激增|猛增|翻倍|\bspikes?\b|\bshoots?\s{1,3}up\b|\bdoubles\b/i;
const READING = /(\d{1,6}(?:\.\d{1,3})?)\s{0,2}(GiB|GB|G|MiB|MB|M)(?![A-Za-z])/i;
const mib = (m: RegExpExecArray) => Number(m[1]) * (/^g/i.test(m[2]) ? 1024 : 1);

/** The first reading after the phase word's last place before the other phase's word (or the line's end). */
function readingAfter(text: string, word: RegExp, other: RegExp): number | undefined {
  const at = word.exec(text);
  if (!at) return undefined;
  const rest = text.slice(at.index + at[0].length);
  const stop = other.exec(rest);
  const m = READING.exec(stop ? rest.slice(0, stop.index) : rest);
  return m ? mib(m) : undefined;
}

/** The clause of the line that tells evaluation taking more of the card than training; undefined where none. */
export function evalAboveTraining(line: string, previous = ''): string | undefined {
  if (!EVAL.test(line)) return undefined;
  if (EVAL_THEN_TRAIN.test(line) || MORE_IN_EVAL.test(line) || EVAL_ABOVE_ZH.test(line)) return MEMORY.test(line) ? line : undefined;
  if (MEMORY.test(line) && SURGE.test(line) && !TRAIN.test(line)) return line;
  // Figures: training's reading on this line or the one before, evaluation's on this line, a third above it or more.
  const evalMiB = readingAfter(line, EVAL, TRAIN);
  const trainMiB = readingAfter(line, TRAIN, EVAL) ?? (TRAIN.test(previous) && !EVAL.test(previous) ? readingAfter(previous, TRAIN, EVAL) : undefined);
  return evalMiB !== undefined && trainMiB !== undefined && MEMORY.test(line + previous) && evalMiB > 1.3 * trainMiB ? line : undefined;
}
