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

/** The smaller size or length a line of the report says worked and the larger it says failed, as stated. */
export function readSmallerInput(text: string): SmallerInputFacts {
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
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
  return {};
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
