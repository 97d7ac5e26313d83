// Turns a diagnosis into the platform-neutral Reply (used by /gpu diagnose, pasted logs and the CLI).
import type { Reply, ReplySection } from '../core/reply.js';
import type { DiagnoseResult } from './diagnose.js';
import type { LogInput } from './input.js';
import { formatMiB } from './fixes/arithmetic.js';

// Each formatter receives the fact stored under its key (a number or a string, by the Facts type).
const FACT_LABELS: [string, string, (v: never) => string][] = [
  ['triedAllocMiB', 'Tried to allocate', formatMiB],
  ['totalCapacityMiB', 'GPU capacity', formatMiB],
  ['freeMiB', 'Free on GPU', formatMiB],
  ['allocatedMiB', 'Allocated by PyTorch', formatMiB],
  ['reservedMiB', 'Reserved by PyTorch', formatMiB],
  ['reservedUnallocatedMiB', 'Reserved, unallocated', formatMiB],
  ['xlaUsedMiB', 'XLA program needs', formatMiB],
  ['xlaArgumentsMiB', 'of which arguments', formatMiB],
  ['xlaProgramMiB', 'of which temporaries', formatMiB],
  ['gpuIndex', 'GPU', String],
  ['gpuName', 'GPU model', String],
  ['toolName', 'Tool', String],
  ['batch', 'batch', String],
  ['workers', 'workers', String],
  ['imgsz', 'imgsz', String],
  ['cache', 'cache', String],
  ['model', 'model', String],
  ['paramsB', 'parameters', (v: number) => `${v}B`],
  ['dtype', 'dtype', String],
  ['hostRamGiB', 'Host RAM', (v: number) => `${v} GB`],
];

const SHAPE_WORDS: Record<string, string> = {
  flat: 'flat',
  growth: 'keeps rising',
  sawtooth_rising: 'peaks come back down, to a rising level',
  sawtooth: 'up and down, no trend',
  warmup: 'rose at the start, level since',
  step: 'one jump',
  irregular: 'irregular',
};

const HOLDER_NAMES: Record<string, string> = {
  other_processes: 'Other processes',
  allocator_cache: "PyTorch's allocator cache",
  not_capacity: 'Not capacity',
  weights: 'The model weights',
  optimizer_state: "The optimizer's state",
  activations: 'This process (activations)',
};

export function diagnosisReply(result: DiagnoseResult, input?: Pick<LogInput, 'notes'>): Reply {
  const notes = [...(input?.notes ?? []), ...(result.readings.notes ?? [])];
  const [best, ...others] = result.diagnoses;
  if (!best && result.notMemory) {
    const { type, message } = result.notMemory;
    const sections: ReplySection[] = [
      {
        text: `Not a memory problem: the run ended with ${type}${message ? `: ${message.slice(0, 200)}` : ''}. No batch, worker or memory setting will change that; fix the error itself (the last traceback shows where it was raised).`,
      },
    ];
    if (notes.length) sections.push({ text: notes.join(' ') });
    return { title: `Not a memory problem (${type})`, severity: 'info', sections };
  }
  if (!best) {
    const sections: ReplySection[] = [
      {
        text: 'No GPU or host memory problem recognised in this log (checked: CUDA/HIP out of memory, fragmentation, DataParallel replicas, host OOM kills, shared memory, growing memory, cuBLAS/cuDNN allocation, NCCL, driver/nvidia-smi, device-side asserts).',
      },
    ];
    if (notes.length) sections.push({ text: notes.join(' ') });
    return { title: 'No diagnosis', severity: 'info', sections };
  }
  const severity = ['device_assert_not_memory', 'nccl_or_distributed', 'driver_or_smi'].includes(best.category) ? 'warning' : 'error';
  const sections: ReplySection[] = [];
  const fields = FACT_LABELS.filter(([k]) => (best.facts as Record<string, unknown>)[k] !== undefined).map(([k, label, fmt]) => ({
    label,
    value:
      fmt((best.facts as Record<string, unknown>)[k] as never) +
      (k === 'batch' && best.facts.batchDefaultOf ? ` (${best.facts.batchDefaultOf}'s default; the log does not state it)` : '') +
      (k === 'batch' && best.facts.batchFromShape ? ` (read from the failing tensor's ${best.facts.batchFromShape})` : ''),
  }));
  const series = best.facts.memorySeriesMiB;
  if (series && series.length >= 2 && best.facts.memoryShape) {
    fields.push({
      label: 'Memory over the run',
      value: `${formatMiB(series[0])} -> ${formatMiB(series[series.length - 1])} over ${series.length} readings (${SHAPE_WORDS[best.facts.memoryShape]})`,
    });
  }
  if (fields.length) sections.push({ heading: 'From the log', fields });
  if (best.facts.holderWhy)
    sections.push({
      heading: 'Who holds the memory',
      text: `${best.facts.holder ? (HOLDER_NAMES[best.facts.holder] ?? best.facts.holder) : 'Not stated'}: ${best.facts.holderWhy}`,
    });
  best.fixes.forEach((fix, i) => {
    const section: ReplySection = { heading: i === 0 ? 'Fix' : undefined, text: `${i + 1}. ${fix.summary}` };
    const code = [
      fix.env &&
        Object.entries(fix.env)
          .map(([k, v]) => `export ${k}=${v}`)
          .join('\n'),
      fix.code,
      fix.command,
    ]
      .filter(Boolean)
      .join('\n');
    if (code) section.code = code;
    sections.push(section);
  });
  if (best.evidence.length) sections.push({ heading: 'Evidence', code: best.evidence.join('\n') });
  if (others.length)
    sections.push({
      text: `Also matched: ${others
        .slice(0, 3)
        .map((d) => `${d.title} (${d.category})`)
        .join('; ')}`,
    });
  if (notes.length) sections.push({ text: notes.join(' ') });
  return { title: `${best.title} [${best.category}]`, severity, sections, footer: `rule ${best.rule}` };
}
