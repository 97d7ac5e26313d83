// A smaller input worked, a larger one failed (issue 23): the report's own experiment. When one sentence states two
// sizes of the same measure (two W×H image sizes, or two context / sequence lengths), says the run works at one and
// fails at the other, the input's size is what decides, whatever its absolute value: "I am able to run with a context
// length of 2048 without a problem, but when I enlarge the context length to 4096 it runs out of memory", "512x512
// works fine, 1024x1024 gives OOM". The lever is that size (keep it, or the largest that fits; tile or chunk beyond
// it), not the batch, which the report did not change. Read per line, bounded and linear.
import { oomAfterSteps } from './progress.js';
import type { Incident, InputPart, PhasePart } from '../incident/index.js';
import { boundedLines } from '../lines.js';

export type SmallerInputFacts = Pick<InputPart, 'smallerWorked' | 'largerFailed'>;

const MAX_LINES = 5000;
const MAX_LINE = 1200;
const SMALL_BATCH = 2;

// Chinese reports count in 万 (ten thousand), often written W: "28W" / "28万" tokens is 280,000.
const LENGTH_VALUE = String.raw`(\d{3,7}|\d{1,4}[kK]|\d{1,3}(?:\.\d)?[wW万])(?![a-zA-Z0-9_]|\.\d)`;
// Two image sizes: "512x512", "1024 × 768", "768*768".
// (Markdown escapes the star, "1024\\*1024"; some write a capital X, "1024X1024".)
const IMAGE = /(?<![\w.])(\d{3,5})[ \t]?(?:\\?\*|[x×X])[ \t]?(\d{3,5})(?!\w|\.\d)/g;
// Two lengths named by the settings' and reports' own words: context length, n_ctx / num_ctx / --ctx-size,
// max_length, max_seq_length, cutoff_len, max_model_len, sequence length, token length and Chinese reports' token长度 /
// 输入长度 / 上下文长度 (a bare "N tokens" is as often the prompt's
// or the output's count as the setting's, so it does not count).
const LENGTH = new RegExp(
  String.raw`(\b(?:context(?:[ \t]length|[ \t]window)?|ctx[-_]size|num_ctx|n_ctx|max[-_ ]?(?:seq(?:uence)?[-_ ]?)?len(?:gth)?|cutoff[-_ ]?len(?:gth)?|max[-_]model[-_]len|sequence[ \t]length|seq[-_ ]len|token[ \t]length)\b|\btoken[ \t]?(?:长度|数)|(?:输入|上下文|序列)长度)[^\d\n]{0,24}?${LENGTH_VALUE}`,
  'gi',
);
const WORKS =
  /\b(?:works?|worked|working|fine|without (?:a |any )?(?:problem|issue|error)s?|no problems?|(?:am|was|is|are|were) able to|succeed\w{0,3}|runs? (?:fine|ok|well)|ran (?:fine|ok|well))\b|正常|可以跑|能跑|没问题|没有问题|不(?:会)?报错|不会爆/i;
const FAILS = /\b(?:OOM|out[ -]of[ -]memory|fails?|failed|crash\w{0,3}|errors?)\b|爆|不够|不足|溢出|报错/i;

const tokens = (v: string) => (/k$/i.test(v) ? Number(v.slice(0, -1)) * 1024 : /[wW万]$/.test(v) ? Number(v.slice(0, -1)) * 10_000 : Number(v));

// A report that ties the failure to raising the length: "with larger cutoff_len like 768, it will cause OOM",
// "increasing max_length to 4096 runs out of memory", "把 cutoff_len 调大到 4096 就爆显存". The length it ran at is
// then the one the paste states elsewhere (a setting or its default), below the one that failed.
const RAISED = /\b(?:larger|longer|bigger|higher|increas\w{0,3}|rais\w{0,3}|enlarg\w{0,3})\b|调大|加大|增大|提高/i;

/** Every stated length of the paste (setting words and values), in order, at most `max`. */
function statedLengths(lines: string[], max: number): { n: number; quote: string }[] {
  const out: { n: number; quote: string }[] = [];
  for (const line of lines) {
    LENGTH.lastIndex = 0;
    for (let m = LENGTH.exec(line); m && out.length < max; m = LENGTH.exec(line)) out.push({ n: tokens(m[2]), quote: `${m[1]} ${m[2]}` });
  }
  return out;
}

/** A line that says a larger length fails, and a smaller length the paste states: the report's experiment in two places. */
function raisedLengthFails(lines: string[]): SmallerInputFacts {
  for (const line of lines) {
    if (!line || !RAISED.test(line) || !FAILS.test(line) || WORKS.test(line)) continue;
    const failed = statedLengths([line], 8);
    if (!failed.length) continue;
    const large = failed.reduce((a, b) => (b.n > a.n ? b : a));
    const ran = statedLengths(lines, 64).filter((l) => l.n > 0 && l.n < large.n);
    if (ran.length) return { smallerWorked: ran[0].quote, largerFailed: large.quote };
  }
  return {};
}

// The failing input named in words after stated sizes that worked: "416*240 and 832*480 work, higher resolutions run out
// of memory", "用416*240与832*480测试没有问题，但使用更高分辨率的就会爆显存".
const LARGER_WORDS =
  /\b(?:higher|larger|bigger)[ \t]{1,2}(?:resolutions?|sizes?|images?|inputs?|frames?)\b|更高(?:的)?分辨率|更大(?:的)?(?:分辨率|尺寸|图片|图像|输入)/i;
// A size the report changed its input to, then the run failed: "changed the input size to [480, 640] ... out of memory",
// "将输入图片尺寸修改为[480, 640]，则代码将无法正常工作，并提示显存不足". Before the change it ran: the change is the experiment.
const CHANGED_TO = String.raw`[ \t]{0,2}((?:[\[(][ \t]{0,2})?\d{3,5}[ \t]{0,2}[,x×*][ \t]{0,2}\d{3,5}(?:[ \t]{0,2}[\])])?)`;
const CHANGED_SIZE = new RegExp(
  String.raw`(?:(?:(?:image|input|img)[ \t]{1,2}(?:size|resolution)|resolution|尺寸|分辨率)[^\n\d]{0,12}?(?:\b(?:changed?|changing|set|setting|increased?|increasing|resized?)[ \t]{1,2}(?:it[ \t]{1,2})?to|修改为|改为|改成|设为|设置为|调到|调整为|提高到)|\b(?:changed?|changing|set|setting|increased?|increasing|raised?|raising)[ \t]{1,2}(?:the[ \t]{1,2})?(?:(?:image|input|img)[ \t]{1,2})?(?:size|resolution)[ \t]{1,2}to)${CHANGED_TO}`,
  'i',
);

/** Stated sizes that worked and a larger one said in words to fail, or a size the report changed to before it failed. */
function sizeSaidInWords(lines: string[]): SmallerInputFacts {
  for (const line of lines) {
    if (!line || !FAILS.test(line)) continue;
    const larger = LARGER_WORDS.exec(line);
    if (larger && WORKS.test(line)) {
      const sizes = [...line.matchAll(IMAGE)].slice(0, 8).map((m) => ({ n: Number(m[1]) * Number(m[2]), quote: m[0] }));
      if (sizes.length) return { smallerWorked: sizes.reduce((a, b) => (b.n > a.n ? b : a)).quote, largerFailed: larger[0] };
    }
    const changed = CHANGED_SIZE.exec(line);
    if (changed) return { smallerWorked: 'the size before the change', largerFailed: changed[1].trim() };
  }
  return {};
}

/** The smaller size or length a line of the report says worked and the larger it says failed, as stated. */
export function readSmallerInput(text: string): SmallerInputFacts {
  const lines = [...boundedLines(text, MAX_LINES, MAX_LINE)];
  for (const line of lines) {
    // A larger input said in words is the one that failed: every stated size of that line worked (sizeSaidInWords).
    if (!line || !WORKS.test(line) || !FAILS.test(line) || LARGER_WORDS.test(line)) continue;
    for (const [re, size, quote] of [
      [IMAGE, (m: RegExpExecArray) => Number(m[1]) * Number(m[2]), (m: RegExpExecArray) => m[0]],
      [LENGTH, (m: RegExpExecArray) => tokens(m[2]), (m: RegExpExecArray) => `${m[1]} ${m[2]}`],
    ] as [RegExp, (m: RegExpExecArray) => number, (m: RegExpExecArray) => string][]) {
      const seen: { n: number; quote: string }[] = [];
      re.lastIndex = 0;
      for (let m = re.exec(line); m && seen.length < 8; m = re.exec(line)) seen.push({ n: size(m), quote: quote(m).trim() });
      if (seen.length < 2) continue;
      const small = seen.reduce((a, b) => (b.n < a.n ? b : a));
      const large = seen.reduce((a, b) => (b.n > a.n ? b : a));
      if (small.n > 0 && large.n > small.n) return { smallerWorked: small.quote, largerFailed: large.quote };
    }
  }
  const raised = raisedLengthFails(lines);
  return raised.smallerWorked !== undefined ? raised : sizeSaidInWords(lines);
}

const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';
// An evaluation too: the report ran the same loop at the smaller input, so the input is what changed.
const INPUT_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'backward', 'generate', 'eval']);

/**
 * The report's own experiment names the input size first: a smaller size or length worked and a larger failed, no
 * stated batch above 2 (a larger batch beside it is the batch lever's), a phase that runs inputs, no growth and no
 * steps done at the failing settings. The weights fit by the report's own run at the smaller size.
 */
export function smallerInputFirst(f: Incident): boolean {
  if (f.input.smallerWorked === undefined) return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) return false;
  return INPUT_PHASES.has(f.phase.name) && !grows(f) && !oomAfterSteps(f);
}
