// One input skipped after its OOM while the others ran (issue 23: batch 1, the input's size is the lever). Scripts that
// process one file per call catch each input's error, print it with the input's name and go on with the next:
// Bringing-Old-Photos-Back-to-Life's test scripts print "Skip %s due to an error:\n%s" (Global/test.py,
// Face_Enhancement) and its pipeline wrappers "Skip photo due to an error:\n%s". Such a line over a CUDA OOM says the
// run feeds one input at a time (there is no batch to lower) and that the inputs it did not skip fit: this input is too
// large for the card, so a smaller or tiled input is the first lever. Read from the fixed line, bounded, per line.
import type { Incident, InputPart } from '../incident/index.js';
import { boundedLines } from '../lines.js';

export type InputSkippedFacts = Pick<InputPart, 'skippedInput'>;

const MAX_LINES = 5000;
const MAX_LINE = 600;
const SKIP = /^\s{0,8}Skip (photo|\S{1,200}) due to an error:\s?(.{0,300})$/;
const OOM = /out of memory|OutOfMemoryError/i;

/** The input a skip line names, where its error (on that line or the next, where the format's \n puts it) is a CUDA OOM. */
export function readInputSkipped(text: string): InputSkippedFacts {
  const lines = [...boundedLines(text, MAX_LINES, MAX_LINE)];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].includes(' due to an error:')) continue;
    const m = SKIP.exec(lines[i]);
    if (!m) continue;
    const error = `${m[2]} ${lines[i + 1] ?? ''}`;
    if (OOM.test(error)) return { skippedInput: m[1] === 'photo' ? 'a photo' : m[1] };
  }
  return {};
}

/** A skipped input over its OOM, with no stated batch above 1 and nothing training: that input's size first. */
export function inputSkippedFirst(f: Incident): boolean {
  if (f.input.skippedInput === undefined || f.run.training === true) return false;
  return f.run.batch === undefined || f.run.batchDefaultOf !== undefined || f.run.batch <= 1;
}
