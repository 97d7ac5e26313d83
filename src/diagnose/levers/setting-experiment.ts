// The report's own experiment with one memory setting (issue 23): the run fits with the setting on and runs out with it
// off ("if I set Accelerator(mixed_precision="fp16"), the code runs normally, but when I turn off the flag the code
// raise OOM"; "with gradient_checkpointing, training runs well ... When I drop gradient_checkpointing, I got oom";
// "开了 fp16 就能跑，关掉就爆显存"). That setting is then the first lever, whatever else the paste states. Read per clause
// of one line, or of two consecutive lines: one clause (or it and the clause before) says it works with the setting,
// another says it runs out with the setting off, in either order; the reverse report ("with --fp16 I get OOM, but fp32
// works") is not it. Bounded and linear.
import { boundedLines } from '../lines.js';

const OFF_BASE = String.raw`\b(?:turn(?:ed|ing|s)?[ \t]{1,3}(?:\w{1,24}[ \t]{1,3}){0,3}?off|off[ \t]{1,3}the[ \t]{1,3}\w{1,12}|without(?![ \t]{1,3}(?:any[ \t]{1,3}|a[ \t]{1,3})?(?:problems?|issues?|errors?))|disabl\w{1,4}|remov\w{1,4}|drop(?:s|ped|ping)?|(?:do|does|did)(?:n't| not)[ \t]{1,3}(?:set|use))\b|关掉|关闭|去掉|不开|不用`;
const WORKS_WORD =
  /\b(?:works?|worked|runs?[ \t]{1,3}(?:normally|fine|ok|well)|ran[ \t]{1,3}(?:normally|fine|ok|well)|fits?|no[ \t]{1,3}(?:OOM|error))\b|正常|能跑|可以跑|没问题/i;
const FAILS_WORD = /\b(?:OOM|out[ -]of[ -]memory)\b|爆显存|显存不足|显存不够/i;
// A clause that turns the setting on without naming it again ("with it enabled it works"), when the text names it elsewhere.
const ON_AGAIN = /\b(?:with[ \t]{1,3}it|enabl(?:e|ed|ing)|turn(?:ed|ing)?[ \t]{1,3}(?:it[ \t]{1,3})?on)\b|开启|打开|开着/i;
const CLAUSE = /[,;，；\n]|\bbut\b|\bhowever\b|但是?|而|却/i;
const MAX_LINES = 5000;
const MAX_LINE = 1200;
const MAX_CLAUSES = 24;
const MAX_QUOTE = 160;

export interface SettingWords {
  /** The setting's own words ("fp16", "gradient_checkpointing"). */
  on: RegExp;
  /** Words that say it is off beyond the shared ones ("fp32" for precision). */
  offExtra?: string;
}

/** The clauses of a text: one works with the setting on, another runs out with it off. */
function worksOnFailsOff(text: string, on: RegExp, off: RegExp): boolean {
  const c = text.split(CLAUSE).slice(0, MAX_CLAUSES);
  const plainOn = (i: number) => i >= 0 && on.test(c[i]) && !off.test(c[i]) && !FAILS_WORD.test(c[i]);
  const named = (i: number) => plainOn(i) || plainOn(i - 1) || ON_AGAIN.test(c[i]);
  const worksOn = (i: number) => WORKS_WORD.test(c[i]) && !FAILS_WORD.test(c[i]) && !off.test(c[i]) && named(i);
  const failsOff = (j: number) => FAILS_WORD.test(c[j]) && !WORKS_WORD.test(c[j]) && (off.test(c[j]) || (j > 0 && off.test(c[j - 1])));
  const works = c.findIndex((_, i) => worksOn(i));
  return works >= 0 && c.some((_, j) => j !== works && failsOff(j));
}

/** The report's words (one line, or two consecutive lines) that say the run fits with the setting and runs out without it. */
export function readSettingWorked(text: string, words: SettingWords): string | undefined {
  const off = new RegExp(words.offExtra ? `${OFF_BASE}|${words.offExtra}` : OFF_BASE, 'i');
  const lines = [...boundedLines(text, MAX_LINES, MAX_LINE)];
  for (let i = 0; i < lines.length; i++) {
    for (const span of [lines[i], i + 1 < lines.length ? `${lines[i]}\n${lines[i + 1]}` : '']) {
      if (!span || !words.on.test(span) || !FAILS_WORD.test(span) || !worksOnFailsOff(span, words.on, off)) continue;
      const quote = span.replace(/\s{1,40}/g, ' ').trim();
      return quote.length > MAX_QUOTE ? `${quote.slice(0, MAX_QUOTE - 3)}...` : quote;
    }
  }
  return undefined;
}

/** Half precision (fp16 / bf16 / mixed precision / AMP): fp32 and full precision are it off. */
export const HALF_PRECISION: SettingWords = {
  on: /\b(?:fp16|bf16|half[ -]precision|mixed[ _-]?precision|amp|autocast)\b|半精度|混合精度/i,
  offExtra: String.raw`\b(?:fp32|float32|full[ -]precision)\b`,
};
/** Gradient (activation) checkpointing, by its own words only ("checkpoint" alone is a saved model). */
export const CHECKPOINTING: SettingWords = { on: /\b(?:gradient|activation)[ _-]?checkpointing\b|梯度检查点|重计算/i };
