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

const LENGTH_VALUE = String.raw`(\d{3,7}|\d{1,4}[kK])(?!\w|\.\d)`;
// Two image sizes: "512x512", "1024 × 768", "768*768".
const IMAGE = /(?<![\w.])(\d{3,5})[ \t]?[x×*][ \t]?(\d{3,5})(?!\w|\.\d)/g;
// Two lengths named by the settings' and reports' own words: context length, n_ctx / num_ctx / --ctx-size,
// max_length, max_seq_length, cutoff_len, max_model_len, sequence length (a bare "N tokens" is as often the prompt's
// or the output's count as the setting's, so it does not count).
const LENGTH = new RegExp(
  String.raw`\b(context(?:[ \t]length|[ \t]window)?|ctx[-_]size|num_ctx|n_ctx|max[-_ ]?(?:seq(?:uence)?[-_ ]?)?len(?:gth)?|cutoff[-_ ]?len(?:gth)?|max[-_]model[-_]len|sequence[ \t]length|seq[-_ ]len)\b[^\d\n]{0,24}?${LENGTH_VALUE}`,
  'gi',
);
const WORKS =
  /\b(?:works?|worked|working|fine|without (?:a |any )?(?:problem|issue|error)s?|no problems?|(?:am|was|is|are|were) able to|succeed\w{0,3}|runs? (?:fine|ok|well)|ran (?:fine|ok|well))\b|正常|可以跑|能跑|没问题/i;
const FAILS = /\b(?:OOM|out[ -]of[ -]memory|fails?|failed|crash\w{0,3}|errors?)\b|爆|不够|不足|溢出|报错/i;

const tokens = (v: string) => (/k$/i.test(v) ? Number(v.slice(0, -1)) * 1024 : Number(v));

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

/** The smaller size or length a line of the report says worked and the larger it says failed, as stated. */
export function readSmallerInput(text: string): SmallerInputFacts {
  const lines = [...boundedLines(text, MAX_LINES, MAX_LINE)];
  for (const line of lines) {
    if (!line || !WORKS.test(line) || !FAILS.test(line)) continue;
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
  return raisedLengthFails(lines);
}

const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';
const INPUT_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'backward', 'generate']);

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
