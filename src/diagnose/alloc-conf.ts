// PyTorch's allocator settings under both of their names (issue 23): PYTORCH_ALLOC_CONF is the
// accelerator-neutral name; PYTORCH_CUDA_ALLOC_CONF is its alias, deprecated with a warning from 2.9
// ("PYTORCH_CUDA_ALLOC_CONF is deprecated, use PYTORCH_ALLOC_CONF instead"). On 2.9.1 the new name
// was silently ignored for CUDA's expandable_segments (pytorch/pytorch#183387; verified fixed in 2.11),
// so the advice names PYTORCH_ALLOC_CONF only where the log says torch >= 2.11, and the alias, which
// every version honours, otherwise. A setting already made under either name is not advised again.
import { torchVersion } from './torch-version.js';
import type { EnvironmentPart } from './incident/index.js';

export const NEW_NAME = 'PYTORCH_ALLOC_CONF';
export const OLD_NAME = 'PYTORCH_CUDA_ALLOC_CONF';
/** The first release that honours the new name for CUDA's expandable segments. */
const NEW_NAME_FROM: [number, number] = [2, 11];

// The variable set to expandable_segments:True, in a command, an export, a Python os.environ line or a dump.
// PyTorch's own OOM message suggests the same line ("try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"): that is advice, not a setting.
const ALREADY_SET = /\b(PYTORCH_(?:CUDA_)?ALLOC_CONF)[\s"'\]=:,]{1,8}[\w:,.]{0,80}?expandable_segments:\s?True/gi;
const ADVICE_BEFORE = /\b(?:try|consider) setting\s{0,3}$/i;
const WINDOW = 256 * 1024;

const atLeast = (v: [number, number], min: [number, number]) => v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]);

/** Which name to advise, the version that decided it, and a setting the log shows already made. */
export function allocConfFacts(text: string): Pick<EnvironmentPart, 'allocConfName' | 'torchVersion' | 'expandableAlreadySet'> {
  const out: Pick<EnvironmentPart, 'allocConfName' | 'torchVersion' | 'expandableAlreadySet'> = {};
  const version = torchVersion(text);
  if (version) out.torchVersion = `${version[0]}.${version[1]}`;
  out.allocConfName = version && atLeast(version, NEW_NAME_FROM) ? NEW_NAME : OLD_NAME;
  const window = text.length > 2 * WINDOW ? text.slice(0, WINDOW) + '\n' + text.slice(-WINDOW) : text;
  ALREADY_SET.lastIndex = 0;
  for (let m = ALREADY_SET.exec(window); m; m = ALREADY_SET.exec(window)) {
    if (ADVICE_BEFORE.test(window.slice(Math.max(0, m.index - 20), m.index))) continue;
    out.expandableAlreadySet = m[1].toUpperCase();
    break;
  }
  return out;
}
