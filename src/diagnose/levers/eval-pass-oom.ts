// A climb of GPU memory told through one evaluation, test or prediction pass over a set, and the pass ending in an
// out-of-memory error (issue 23, eval class): the card ran out because of what the pass keeps of every batch (its
// predictions, logits or embeddings gathered on the device until the set ends), so the verdict is the OOM's, with that
// lever first (the growth rule's eval-pass text: move each batch's outputs off the GPU, HF's eval_accumulation_steps),
// not a leak across the run to be searched for. A climb through the pass that the report does not say ran out stays a
// growth. Evidence, each in a fixed form: the pass's climb (levers/eval-over-set.ts readEvalPassGrowth) and an OOM
// shown or told (a framework's message, "out of memory" / OOM / 显存不足 words) on a line that does not deny it.
// Patterns are bounded and applied per line: linear in the paste's length.
import type { Category } from '../rule-types.js';
import type { Incident } from '../incident/index.js';
import type { Locale } from '../../core/i18n.js';
import { boundedLines } from '../lines.js';

const MAX_LINES = 20_000;
const MAX_LINE = 600;
/** The rule that answers a climb told in words (knowledge/gpu-memory-growth-reported). */
const GROWTH_TOLD_RULE = 'gpu-memory-growth-reported';

// The failure itself: a framework's OOM message or the report's words for it ("out of memory", "OOM", "the error of memory
// out", 显存不足).
const OOM_WORDS =
  /\bout[ -]of[ -]memory\b|\bmemory\s{1,3}out\b(?![ -]of)|\bOutOfMemoryError\b|\bOOM(?:s|ed)?\b|\bCUDA error: out of memory|显存(?:不足|不够|爆|溢出)|爆显存|(?:显存|内存)\s{0,2}溢出/i;
// A line that denies the failure or wishes it away ("no OOM errors occur", "to avoid OOM", "without running out of memory").
const DENIED =
  /\b(?:no|not|never|without|avoid\w{0,3}|prevent\w{0,3}|instead of)\b[^\n]{0,30}(?:\bout[ -]of[ -]memory\b|\bOOMs?\b)|不会\s{0,2}(?:爆显存|显存不足)/i;

/** The pass told to climb ended in an out-of-memory error the paste shows or tells. */
export function evalPassEndsInOom(incident: Incident, text: string): boolean {
  if (incident.eval.evalPassGrowth === undefined) return false;
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) if (OOM_WORDS.test(line) && !DENIED.test(line)) return true;
  return false;
}

const TITLE: Record<Locale, string> = {
  en: 'Out of GPU memory: the memory climbed through an evaluation or prediction pass until the card ran out',
  zh: 'GPU 显存不足：显存在评估或预测的过程中一路上涨，直到显卡用完',
};

/** The OOM's verdict for the growth rule's diagnosis where the pass told to climb ended in one; else undefined. */
export function evalPassOomVerdict(ruleId: string, incident: Incident, text: string, loc?: Locale): { category: Category; title: string } | undefined {
  if (ruleId !== GROWTH_TOLD_RULE || !evalPassEndsInOom(incident, text)) return undefined;
  return { category: 'cuda_oom', title: TITLE[loc ?? 'en'] ?? TITLE.en };
}
