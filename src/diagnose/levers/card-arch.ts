// A card newer than the CUDA its framework was built for (issue 23 item 4, "one environment is assumed"). Every CUDA
// release can build code only for the architectures known when it shipped (sm_75 from CUDA 10.0, sm_86 from 11.1,
// sm_89/sm_90 from 11.8, sm_120 from 12.8): a TensorFlow or PyTorch built against an older CUDA, with that CUDA's
// cuBLAS and cuDNN, has no code for a newer card, so its first GEMM or convolution fails (CUBLAS_STATUS_EXECUTION_FAILED,
// "Blas GEMM launch failed", a handle that cannot be created) whatever the batch and the free memory. The evidence an
// engineer reads in any such paste: the card (its name or the compute capability the framework printed) and every
// CUDA the paste names for the stack (a toolkit version, cudatoolkit, "+cu102", "CUDA used to build PyTorch", a
// TensorFlow version's tested CUDA, the newest CUDA a PyTorch release was published for). Only when even the newest
// of them is older than the card's architecture is the build the cause; the driver's own "CUDA Version" (nvidia-smi's
// header) names what the driver supports, not the build, and is not read. Data: knowledge/gpu-archs.json.
// Fixed vocabulary, bounded patterns, lines capped (untrusted input, linear).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import RE2 from 're2';
import { PROJECT_ROOT } from '../../core/paths.js';
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';

const MAX_LINE = 2000;
const MAX_LINES = 4000;

/** A version as major * 100 + minor ("10.2" -> 1002, "1.15" -> 115): minors above 9 compare right. */
const ver = (major: string | number, minor: string | number) => Number(major) * 100 + Number(minor);
const parse = (s: string) => {
  const [a, b] = s.split('.');
  return ver(a, b ?? 0);
};
const show = (v: number) => `${Math.floor(v / 100)}.${v % 100}`;

interface ArchTable {
  capabilities: { cc: number; arch: string; minCuda: number }[];
  cards: { re: RE2; cc: number }[];
  tensorflow: { from: number; cuda: number }[];
  pytorch: { from: number; cuda: number }[];
}

let table: ArchTable | undefined;

/** knowledge/gpu-archs.json, versions as numbers (see ver). */
export function loadArchTable(file = join(PROJECT_ROOT, 'knowledge', 'gpu-archs.json')): ArchTable {
  if (!existsSync(file)) return { capabilities: [], cards: [], tensorflow: [], pytorch: [] };
  type Row = { from: string; cuda: string };
  const doc = JSON.parse(readFileSync(file, 'utf8')) as {
    capabilities: { cc: string; arch: string; min_cuda: string }[];
    cards: { pattern: string; cc: string }[];
    tensorflow_cuda: Row[];
    pytorch_max_cuda: Row[];
  };
  const steps = (rows: Row[]) => rows.map((r) => ({ from: parse(r.from), cuda: parse(r.cuda) })).sort((a, b) => a.from - b.from);
  return {
    capabilities: doc.capabilities.map((c) => ({ cc: parse(c.cc), arch: c.arch, minCuda: parse(c.min_cuda) })),
    cards: doc.cards.map((c) => ({ re: new RE2(c.pattern, 'i'), cc: parse(c.cc) })),
    tensorflow: steps(doc.tensorflow_cuda),
    pytorch: steps(doc.pytorch_max_cuda),
  };
}

/** The CUDA of the last step at or below a framework version (none below its first release). */
const stepFor = (steps: { from: number; cuda: number }[], v: number) => steps.filter((s) => s.from <= v).at(-1)?.cuda;

// The card's capability as the framework printed it: TF's device line "major: 7 minor: 5", TF 2's "compute capability:
// 8.6", PyTorch's warning "with CUDA capability sm_86" (not the build's own "sm_37 sm_50 ..." list).
const STATED_CC = [/\bmajor: (\d{1,2}) minor: (\d)\b/, /\bcompute capability:? (\d{1,2})\.(\d)\b/i, /\bCUDA capability sm_(\d{1,2}?)(\d)\b/];
// A CUDA version named for the stack: "CUDA 10.0", "cuda10.0", "Cuda 9.0", "cudatoolkit=10.0/10.1", "CUDA version: 11.2",
// "CUDA runtime version: 9.1.85", "CUDA used to build PyTorch: 9.0.176", "CUDA版本10.0", nvcc's "release 10.0".
const CUDA_NAMED =
  /\b(?:cuda[\s_-]?toolkit|cudatoolkit|cuda(?:[\s_-]?(?:runtime )?version|[\s_-]?版本| used to build PyTorch)?|Cuda compilation tools, release)[\s=:v-]{0,3}(\d{1,2})\.(\d)(?!\d)/gi;
// A wheel's local version ("1.6.0+cu102") or PyTorch's index URL ("download.pytorch.org/whl/cu118").
const CUDA_WHEEL = /(?:\+|whl\/)cu(\d{2,3})\b/g;
// Further versions listed after one ("cudatoolkit=10.0/10.1", "tensorflow-gpu=1.13.1/1.14.0/1.15.0").
const LISTED = /^(?:\.\d{1,3})?\s?(?:\/|,|or)\s?(\d{1,2})\.(\d{1,2})/i;
const TF_NAMED = /\b(?:tensorflow(?:-gpu)?|tf)(?:[\s_-]?version)?[\s=:v-]{1,4}([12])\.(\d{1,2})(?!\d)/gi;
const TORCH_NAMED = /\b(?:pytorch|torch)(?:[\s_-]?version)?[\s=:v-]{1,4}([12])\.(\d{1,2})(?!\d)/gi;
// nvidia-smi's header and deviceQuery name the driver's CUDA, not the build's.
const DRIVER_LINE = /Driver Version|CUDA Driver/i;

/** Every version in a match and the ones listed right after it. */
function listed(line: string, m: RegExpExecArray): number[] {
  const out = [ver(m[1], m[2])];
  let rest = line.slice(m.index + m[0].length, m.index + m[0].length + 40);
  for (let k = 0; k < 3; k++) {
    const n = LISTED.exec(rest);
    if (!n) break;
    out.push(ver(n[1], n[2]));
    rest = rest.slice(n[0].length);
  }
  return out;
}

export interface CardArch {
  /** The card as named, or "the card" when only its capability is printed. */
  card: string;
  cc: number;
  arch: string;
  minCuda: number;
}

/** The newest card the paste names or prints the capability of, with the first CUDA that supports it. */
export function readCardArch(log: LogText, t: ArchTable = (table ??= loadArchTable())): CardArch | undefined {
  let best: { card: string; cc: number } | undefined;
  const take = (card: string, cc: number) => {
    if (!best || cc > best.cc) best = { card, cc };
  };
  for (let l = 0; l < Math.min(log.lineCount, MAX_LINES); l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    for (const re of STATED_CC) {
      const m = re.exec(line);
      if (m) take('the card', ver(m[1], m[2]));
    }
    for (const c of t.cards) {
      const m = c.re.exec(line);
      if (m) take(m[0].trim(), c.cc);
    }
  }
  if (!best) return undefined;
  const { card, cc } = best;
  const cap = t.capabilities.find((c) => c.cc === cc) ?? t.capabilities.filter((c) => c.cc <= cc && Math.floor(c.cc / 100) === Math.floor(cc / 100)).at(0);
  return cap ? { card, cc, arch: cap.arch, minCuda: cap.minCuda } : undefined;
}

export interface BuildCuda {
  newest: number;
  /** How the paste names the newest one, in words of no language ("CUDA 10.0", "TensorFlow 1.15 (CUDA 10.0)", "PyTorch 1.3 (CUDA ≤ 10.1)"). */
  named: string;
}

/** The newest CUDA the paste names for the framework's build, from versions and framework releases (none: undefined). */
export function readBuildCuda(log: LogText, t: ArchTable = (table ??= loadArchTable())): BuildCuda | undefined {
  let best: BuildCuda | undefined;
  const take = (cuda: number | undefined, named: string) => {
    // CUDA 7 to 13 only: "cuda:0" and other device strings carry no dot, versions outside this range are no CUDA.
    if (cuda === undefined || cuda < 700 || cuda > 1399) return;
    if (!best || cuda > best.newest) best = { newest: cuda, named };
  };
  for (let l = 0; l < Math.min(log.lineCount, MAX_LINES); l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (DRIVER_LINE.test(line) || !/cuda|[+/]cu\d|tensorflow|\btf\b|torch/i.test(line)) continue;
    for (const m of line.matchAll(CUDA_NAMED)) for (const v of listed(line, m)) take(v, `CUDA ${show(v)}`);
    for (const m of line.matchAll(CUDA_WHEEL)) {
      const v = ver(m[1].slice(0, -1), m[1].slice(-1));
      take(v, `cu${m[1]} (CUDA ${show(v)})`);
    }
    for (const m of line.matchAll(TF_NAMED))
      for (const v of listed(line, m)) {
        const cuda = stepFor(t.tensorflow, v);
        if (cuda) take(cuda, `TensorFlow ${show(v)} (CUDA ${show(cuda)})`);
      }
    for (const m of line.matchAll(TORCH_NAMED))
      for (const v of listed(line, m)) {
        const cuda = stepFor(t.pytorch, v);
        if (cuda) take(cuda, `PyTorch ${show(v)} (CUDA ≤ ${show(cuda)})`);
      }
  }
  return best;
}

/** The card is newer than every CUDA the paste names for the build: the finding, as the fix cites it (none: {}). */
export function readCardNewerThanBuild(log: LogText): Partial<StackPart> {
  const card = readCardArch(log);
  if (!card) return {};
  const build = readBuildCuda(log);
  if (!build || build.newest >= card.minCuda) return {};
  // Language-neutral figures: the English and Chinese texts of the rule place them in their own sentences.
  const name = card.card === 'the card' ? 'GPU' : card.card;
  return {
    cardArch: `${name} (sm_${Math.floor(card.cc / 100)}${card.cc % 100}, ${card.arch})`,
    cardNeedsCuda: show(card.minCuda),
    cardBuildCuda: build.named,
  };
}

export const CARD_ARCH_CONDITIONS = {
  card_newer_than_build: ({ incident: i }: { incident: Incident }) => i.stack.cardArch !== undefined,
};
