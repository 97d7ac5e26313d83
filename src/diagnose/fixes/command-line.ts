// Rewrites the training command line from the paste with a fix's changes, so people can copy it.
type Changes = Record<string, number | string | boolean>;

// Each setting's flag names, a name before any name it starts with (names hold no regex metacharacters).
const FLAG_NAMES: Record<string, string[]> = {
  batch: ['per_device_train_batch_size', 'samples_per_gpu', 'batch-size', 'batch_size', 'batch'],
  workers: ['workers_per_gpu', 'num_workers', 'num-workers', 'workers'],
  imgsz: ['img-size', 'img_size', 'imgsz', 'img'],
  accumulate: ['gradient_accumulation_steps', 'accumulate'],
  cache: ['cache'],
};

// `--name value`, `--name=value` or a bare `--name`. A negative number is a value (`--batch-size -1`
// is YOLOv5's AutoBatch); the next flag is not.
const dashedFlag = (name: string) => new RegExp(`(^|\\s)--${name}(?:[= ](?!-[^\\d])(\\S{1,200})|(?=\\s|$))`);
// `name=value` (yolo CLI), also under a dotted path: Hydra overrides (`data.batch_size=32`,
// `++trainer.accumulate_grad_batches=2`) and mmcv/mmengine `--cfg-options train_dataloader.batch_size=2`.
// The path is kept as written. Bounded, so linear on any command line.
const keyedArg = (name: string) => new RegExp(`(^|\\s)((?:\\+{1,2})?(?:[A-Za-z_][\\w-]{0,40}\\.){0,5})${name}=(\\S{0,200})`);
// yacs-style opts after the config (detectron2: `SOLVER.IMS_PER_BATCH 16`).
const spacedArg = (name: string) => new RegExp(`(^|\\s)${name.replace(/\./g, '\\.')} (\\S{1,200})`);

// Settings given as yacs opts, by their full upper-case key.
const SPACED_NAMES: Record<string, string[]> = {
  batch: ['SOLVER.IMS_PER_BATCH'],
  workers: ['DATALOADER.NUM_WORKERS'],
};

/** How the tool takes a setting that the command line does not name yet, e.g. {batch: '--batch-size '}. */
export type AppendSyntax = Partial<Record<string, string>>;

/** Whether the value already written (undefined: a bare flag) is the value the fix asks for. */
function sameValue(written: string | undefined, value: number | string | boolean): boolean {
  if (typeof value === 'boolean') return written === undefined ? value : written.toLowerCase() === String(value);
  return written === String(value);
}

/**
 * The command line with the changes applied, or undefined when none of them changes it (a setting
 * it does not name, or names with that value already): an unchanged command is no correction.
 */
export function rewriteCommandLine(commandLine: string, changes: Changes, append: AppendSyntax = {}): string | undefined {
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
      if (dashed) {
        found = true;
        if (!sameValue(dashed[2], value)) replace(dashed, value === false ? '' : value === true ? `--${name}` : `--${name} ${value}`);
        break;
      }
      const keyed = keyedArg(name).exec(out);
      if (keyed) {
        found = true;
        if (!sameValue(keyed[3], value)) replace(keyed, `${keyed[2]}${name}=${value === false ? 'False' : value === true ? 'True' : value}`);
        break;
      }
    }
    for (const name of found ? [] : (SPACED_NAMES[key] ?? [])) {
      const m = spacedArg(name).exec(out);
      if (!m) continue;
      found = true;
      if (!sameValue(m[2], value)) replace(m, `${name} ${value}`);
      break;
    }
    if (found) continue;
    // A setting the command leaves at the tool's default: written in the tool's own syntax (knowledge/tools.yaml).
    const syntax = append[key];
    if (syntax && typeof value === 'number') {
      // One --cfg-options takes every key: a second one would be a separate (and later-winning) flag.
      if (syntax.startsWith('--cfg-options ') && /\s--cfg-options\s/.test(out)) out = out.replace(/(\s--cfg-options)(?=\s)/, `$1 ${syntax.slice(14)}${value}`);
      else out += ` ${syntax}${value}`;
      changed = true;
      continue;
    }
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
