// Rewrites the training command line from the paste with a fix's changes, so people can copy it.
type Changes = Record<string, number | string | boolean>;

// Each setting's flag names, a name before any name it starts with (names hold no regex metacharacters).
const FLAG_NAMES: Record<string, string[]> = {
  batch: ['per_device_train_batch_size', 'batch-size', 'batch_size', 'batch'],
  workers: ['num_workers', 'num-workers', 'workers'],
  imgsz: ['img-size', 'img_size', 'imgsz', 'img'],
  accumulate: ['gradient_accumulation_steps', 'accumulate'],
  cache: ['cache'],
};

// `--name value`, `--name=value` or a bare `--name`. A negative number is a value (`--batch-size -1`
// is YOLOv5's AutoBatch); the next flag is not.
const dashedFlag = (name: string) => new RegExp(`(^|\\s)--${name}(?:[= ](?!-[^\\d])(\\S{1,200})|(?=\\s|$))`);
// `name=value` (yolo CLI, Hydra).
const keyedArg = (name: string) => new RegExp(`(^|\\s)${name}=(\\S{0,200})`);

/** Whether the value already written (undefined: a bare flag) is the value the fix asks for. */
function sameValue(written: string | undefined, value: number | string | boolean): boolean {
  if (typeof value === 'boolean') return written === undefined ? value : written.toLowerCase() === String(value);
  return written === String(value);
}

/**
 * The command line with the changes applied, or undefined when none of them changes it (a setting
 * it does not name, or names with that value already): an unchanged command is no correction.
 */
export function rewriteCommandLine(commandLine: string, changes: Changes): string | undefined {
  let out = commandLine;
  let changed = false;
  const replace = (m: RegExpExecArray, text: string) => {
    out = out.slice(0, m.index) + m[1] + text + out.slice(m.index + m[0].length);
    changed = true;
  };
  for (const [key, value] of Object.entries(changes)) {
    const names = FLAG_NAMES[key];
    if (!names) continue;
    let found = false;
    for (const name of names) {
      const dashed = dashedFlag(name).exec(out);
      const keyed = dashed ? null : keyedArg(name).exec(out);
      const m = dashed ?? keyed;
      if (!m) continue;
      found = true;
      if (sameValue(m[2], value)) break;
      if (dashed) replace(dashed, value === false ? '' : value === true ? `--${name}` : `--${name} ${value}`);
      else replace(m, `${name}=${value === false ? 'False' : value === true ? 'True' : value}`);
      break;
    }
    if (found) continue;
    // Accumulation is appended only where the tool has such a flag (HF Trainer); YOLOv5 accumulates itself.
    if (key === 'accumulate' && value !== 1 && /--per_device_train_batch_size/.test(out)) {
      out += ` --gradient_accumulation_steps ${value}`;
      changed = true;
    } else if (key === 'workers' && typeof value === 'number') {
      // Both default to 8 workers when the flag is absent.
      if (/^\s*yolo\s/.test(out)) out += ` workers=${value}`;
      else if (/\btrain\.py\b/.test(out)) out += ` --workers ${value}`;
      else continue;
      changed = true;
    }
  }
  return changed ? out.replace(/\s{2,}/g, ' ').trim() : undefined;
}
