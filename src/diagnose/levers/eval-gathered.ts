// Evaluation or prediction that fills host RAM (issue 23): the outputs of the whole set gathered in Python lists,
// dicts or numpy arrays are what holds the memory, not the batch and not the DataLoader workers. Evidence, in a paste
// whose run evaluates, validates, tests, predicts or extracts features: code that appends outputs to a list
// ("predictions_all.append(...)"), the report saying outputs of the set are stored ("storing huge dicts and arrays of
// the ... predicted labels", "the result dictionary ... too much memory"), NumPy failing one array for the whole set
// ("Unable to allocate 32.4 GiB for an array with shape (...)"), or Trainer's eval_accumulation_steps, which moves
// every batch's logits to the CPU and keeps them there until the end. The lever: reduce or write per batch.
// Every pattern is bounded and applied per line: linear in the paste's length.
import type { HostPart } from '../incident/index.js';
import { boundedLines } from '../lines.js';

const MAX_LINES = 20_000;
const MAX_LINE = 1200;
const QUOTE_CHARS = 120;

// The phase: words or frames of an evaluation, validation, test, prediction or feature extraction over a set.
const EVAL_PHASE =
  /\b(?:validat(?:e|ion|ing)|evaluat(?:e|es|ion|ing)|evaluation_loop|prediction_step|predict(?:s|ion|ions|ing)?|inference|infer(?:ring)?|testing|test(?:ing)?\s{1,3}set|val(?:idation)?\s{1,3}set|extract(?:s|ing|ion)?\s{1,3}(?:of\s{1,3})?(?:the\s{1,3})?(?:features|embeddings))\b|验证|评估|评测|预测|推理|特征提取/i;
// Outputs appended to a list: "predictions_all.append(", "all_preds.append(", "embeddings.append(", "results.extend(".
const GATHERED_CODE =
  /\b(?:\w{1,30}_)?(?:preds?|predictions?|outputs?|logits|results?|embeddings?|features?|probs|probabilities|scores|gts)(?:_all|_list)?\s{0,2}\.(?:append|extend)\(/i;
// The report saying the set's outputs are kept: "storing ... dicts and arrays of the ... predicted labels", "keeps all
// predictions in memory", "the result dictionary that is taking up too much memory", "所有预测结果都存在内存".
const GATHERED_TOLD =
  /\b(?:stor(?:e|es|ed|ing)|keep(?:s|ing)?|kept|accumulat\w{0,5}|collect\w{0,5}|gather\w{0,5}|concatenat\w{0,5})\b[^\n]{0,60}?\b(?:predictions?|predicted|outputs|logits|results|embeddings|features|probabilit(?:y|ies))\b|\b(?:results?|predictions?|outputs?|embeddings?|features?)\s{1,3}(?:dict(?:ionary|ionaries|s)?|lists?|arrays?)\b[^\n]{0,60}?\b(?:memory|RAM)\b|(?:预测结果|推理结果|特征|输出)[^\n]{0,20}(?:都|全部)?[^\n]{0,6}(?:存|保存|放)在?内存/i;
// NumPy failing one array: the whole set's outputs or inputs allocated at once.
const ARRAY_AT_ONCE = /Unable to allocate \d{1,6}(?:\.\d{1,3})?\s?[GT]iB for an array with shape/;
const EVAL_ACCUMULATION = /\beval_accumulation_steps\s{0,2}[=:]\s{0,2}\d{1,6}/;
// A host kill told inside an evaluation or prediction ("Killed while evaluating", "在验证的时候进程被杀死", "RAM overflow
// and process death" in "the prediction process"), or a kill line right after the run announced one ("INFO:root:predicting"
// then "Killed"): what such a loop holds across the set is, first of all, its outputs (the reply says it is inferred).
const KILL_TOLD = /\bkill(?:s|ed)?\b|\bprocess\s{1,3}death\b|\b(?:RAM|memory)\s{1,3}overflow\b|被\s{0,2}(?:kill|杀)|杀死|内存(?:溢出|不足|爆)/i;
const KILL_LINE = /^\W{0,4}(?:Killed|已杀死)\W{0,4}$/;
const RECENT = 3;

/**
 * The line that shows the set's outputs gathered in host RAM during an evaluation or prediction, trimmed; else the line
 * that puts a host kill in one (evalKilled); or nothing.
 */
export function readEvalGathered(text: string): Pick<HostPart, 'evalGathered' | 'evalKilled'> {
  let phase = false;
  let shown: string | undefined;
  let killedIn: string | undefined;
  const recent: string[] = [];
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (!line.trim()) continue;
    if (killedIn === undefined) {
      if (EVAL_PHASE.test(line) && KILL_TOLD.test(line)) killedIn = quote(line, 0);
      else if (KILL_LINE.test(line))
        killedIn = recent
          .find((l) => EVAL_PHASE.test(l))
          ?.trim()
          .slice(0, QUOTE_CHARS);
    }
    recent.push(line);
    if (recent.length > RECENT) recent.shift();
    if (!phase && EVAL_PHASE.test(line)) phase = true;
    if (shown === undefined) {
      const m = GATHERED_CODE.exec(line) ?? GATHERED_TOLD.exec(line) ?? ARRAY_AT_ONCE.exec(line) ?? EVAL_ACCUMULATION.exec(line);
      if (m) shown = quote(line, m.index);
    }
    if (phase && shown !== undefined) return { evalGathered: shown };
  }
  return killedIn === undefined ? {} : { evalKilled: killedIn };
}

/** The line around the evidence, at most QUOTE_CHARS from where the evidence starts. */
function quote(line: string, at: number): string {
  const trimmed = line.trim();
  if (trimmed.length <= QUOTE_CHARS) return trimmed;
  const from = Math.max(0, line.indexOf(trimmed) > at ? 0 : at - line.indexOf(trimmed) - 20);
  return (from > 0 ? '…' : '') + trimmed.slice(from, from + QUOTE_CHARS) + '…';
}
