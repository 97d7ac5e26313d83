// Rewrites the training command line from the paste with a fix's changes, so people can copy it.
type Changes = Record<string, number | string | boolean>;

const FLAG_NAMES: Record<string, string[]> = {
  batch: ['per_device_train_batch_size', 'batch-size', 'batch_size', 'batch'],
  workers: ['num_workers', 'num-workers', 'workers'],
  imgsz: ['img-size', 'img_size', 'imgsz', 'img'],
  accumulate: ['gradient_accumulation_steps', 'accumulate'],
  cache: ['cache'],
};

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

export function rewriteCommandLine(commandLine: string, changes: Changes): string | undefined {
  let out = commandLine;
  let changed = false;
  const yoloStyle = /^\s*yolo\s/.test(commandLine);
  for (const [key, value] of Object.entries(changes)) {
    const names = FLAG_NAMES[key];
    if (!names) continue;
    let done = false;
    for (const name of names) {
      const n = escape(name);
      const dashed = new RegExp(`(--${n})(?:[= ](?!-)[^\\s]{0,200}|(?=\\s|$))`);
      const keyed = new RegExp(`(^|\\s)(${n})=[^\\s]{0,200}`);
      if (dashed.test(out)) {
        out = out.replace(dashed, value === false ? '' : value === true ? '$1' : `$1 ${value}`);
        done = true;
      } else if (keyed.test(out)) {
        out = out.replace(keyed, `$1$2=${value === false ? 'False' : value === true ? 'True' : value}`);
        done = true;
      }
      if (done) break;
    }
    // Accumulation is appended only where the tool has such a flag (HF Trainer); YOLOv5 accumulates itself.
    if (!done && key === 'accumulate' && /--per_device_train_batch_size/.test(out)) {
      out += ` --gradient_accumulation_steps ${value}`;
      done = true;
    } else if (!done && key === 'workers' && typeof value === 'number') {
      out += yoloStyle ? ` workers=${value}` : /train\.py/.test(out) ? ` --workers ${value}` : '';
      done = /train\.py|^\s*yolo/.test(out);
    }
    changed ||= done;
  }
  out = out.replace(/\s{2,}/g, ' ').trim();
  return changed && out !== commandLine ? out : undefined;
}
