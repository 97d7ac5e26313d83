// `nvidia-smi -L`: one line per GPU and, where MIG is on, one indented line per MIG device with its
// profile, the only place nvidia-smi prints the profile name beside the device index:
//   GPU 0: NVIDIA H200 (UUID: GPU-...)
//     MIG 1c.3g.71gb  Device  0: (UUID: MIG-...)
//     MIG 2g.35gb     Device  2: (UUID: MIG-...)
// (driver 590; drivers 470-535 print one space between the parts). Pure and linear: one anchored,
// backtrack-free match per line, lines and their length capped.
import { MAX_GPU_INDEX, MAX_MIG_ID, MAX_ROW_CHARS } from './limits.js';

const GPU_LINE = /^GPU (\d{1,4}): /;
const MIG_LINE = /^\s{1,8}MIG ([0-9a-z][0-9a-z.+]{0,39}) {1,8}Device {1,8}(\d{1,4}): /;
/** A GPU has at most 8 MIG devices; 1024 GPUs with 8 each and their own lines. */
const MAX_LIST_LINES = 1024 * 9;

/** MIG profile by GPU index and MIG device index, e.g. 0 -> 3 -> "1g.18gb". */
export type MigProfiles = Map<number, Map<number, string>>;

export function parseSmiList(text: string): MigProfiles {
  const out: MigProfiles = new Map();
  let gpu: number | null = null;
  for (const line of text.split('\n', MAX_LIST_LINES)) {
    if (line.length > MAX_ROW_CHARS) continue;
    const g = GPU_LINE.exec(line);
    if (g) {
      const index = Number(g[1]);
      gpu = index <= MAX_GPU_INDEX ? index : null;
      continue;
    }
    const m = MIG_LINE.exec(line);
    if (!m || gpu === null) continue;
    const device = Number(m[2]);
    if (device > MAX_MIG_ID) continue;
    const profiles = out.get(gpu) ?? new Map<number, string>();
    profiles.set(device, m[1]);
    out.set(gpu, profiles);
  }
  return out;
}
