// Turns a diagnosis into the platform-neutral Reply (used by /gpu diagnose, pasted logs and the CLI).
import { t, type Locale, type MessageKey } from '../core/i18n.js';
import { render } from '../core/message.js';
import type { Reply, ReplySection } from '../core/reply.js';
import type { DiagnoseResult } from './diagnose.js';
import type { LogInput } from './input.js';
import { formatMiB } from './fixes/arithmetic.js';
import { flatView } from './incident/index.js';

// Each formatter receives the fact stored under its key (a number or a string, by the Facts type).
const FACT_LABELS: [string, MessageKey, (v: never) => string][] = [
  ['triedAllocMiB', 'diag.fact.triedAllocMiB', formatMiB],
  ['totalCapacityMiB', 'diag.fact.totalCapacityMiB', formatMiB],
  ['freeMiB', 'diag.fact.freeMiB', formatMiB],
  ['allocatedMiB', 'diag.fact.allocatedMiB', formatMiB],
  ['reservedMiB', 'diag.fact.reservedMiB', formatMiB],
  ['reservedUnallocatedMiB', 'diag.fact.reservedUnallocatedMiB', formatMiB],
  ['xlaUsedMiB', 'diag.fact.xlaUsedMiB', formatMiB],
  ['xlaArgumentsMiB', 'diag.fact.xlaArgumentsMiB', formatMiB],
  ['xlaProgramMiB', 'diag.fact.xlaProgramMiB', formatMiB],
  ['gpuIndex', 'diag.fact.gpuIndex', String],
  ['gpuName', 'diag.fact.gpuName', String],
  ['toolName', 'diag.fact.toolName', String],
  ['batch', 'diag.fact.batch', String],
  ['workers', 'diag.fact.workers', String],
  ['imgsz', 'diag.fact.imgsz', String],
  ['cache', 'diag.fact.cache', String],
  ['model', 'diag.fact.model', String],
  ['paramsB', 'diag.fact.paramsB', (v: number) => `${v}B`],
  ['dtype', 'diag.fact.dtype', String],
  ['hostRamGiB', 'diag.fact.hostRamGiB', (v: number) => `${v} GB`],
];

const SHAPE_WORDS: Record<string, MessageKey> = {
  flat: 'diag.shape.flat',
  growth: 'diag.shape.growth',
  sawtooth_rising: 'diag.shape.sawtooth_rising',
  sawtooth: 'diag.shape.sawtooth',
  warmup: 'diag.shape.warmup',
  step: 'diag.shape.step',
  irregular: 'diag.shape.irregular',
};

const HOLDER_NAMES: Record<string, MessageKey> = {
  other_processes: 'diag.holder.other_processes',
  allocator_cache: 'diag.holder.allocator_cache',
  not_capacity: 'diag.holder.not_capacity',
  weights: 'diag.holder.weights',
  optimizer_state: 'diag.holder.optimizer_state',
  activations: 'diag.holder.activations',
};

export function diagnosisReply(result: DiagnoseResult, input?: Pick<LogInput, 'notes'>, loc?: Locale): Reply {
  // Notes are made as keys and values (note.*) before the language is known; rendered in the reply's.
  const notes = [...(input?.notes ?? []), ...(result.readings.notes ?? [])].map((n) => render(loc, n));
  const [best, ...others] = result.diagnoses;
  if (!best && result.notMemory) {
    const { type, message } = result.notMemory;
    const sections: ReplySection[] = [
      {
        text: t(loc, 'diag.notMemory.text', { error: `${type}${message ? `: ${message.slice(0, 200)}` : ''}` }),
      },
    ];
    if (notes.length) sections.push({ text: notes.join(' ') });
    return { title: t(loc, 'diag.notMemory.title', { type }), severity: 'info', sections };
  }
  if (!best) {
    const sections: ReplySection[] = [
      {
        text: t(loc, 'diag.none.text'),
      },
    ];
    if (notes.length) sections.push({ text: notes.join(' ') });
    return { title: t(loc, 'diag.none.title'), severity: 'info', sections };
  }
  const severity = ['device_assert_not_memory', 'nccl_or_distributed', 'driver_or_smi', 'unrelated'].includes(best.category) ? 'warning' : 'error';
  const sections: ReplySection[] = [];
  const fields = FACT_LABELS.filter(([k]) => flatView(best.incident)[k] !== undefined).map(([k, label, fmt]) => ({
    label: t(loc, label),
    value:
      fmt(flatView(best.incident)[k] as never) +
      (k === 'batch' && best.incident.run.batchDefaultOf ? t(loc, 'diag.fact.batchDefaultOf', { tool: best.incident.run.batchDefaultOf }) : '') +
      (k === 'batch' && best.incident.run.batchFromShape ? t(loc, 'diag.fact.batchFromShape', { shape: best.incident.run.batchFromShape }) : ''),
  }));
  const series = best.incident.series.memorySeriesMiB;
  if (series && series.length >= 2 && best.incident.series.memoryShape) {
    fields.push({
      label: t(loc, 'diag.series.label'),
      value: t(loc, 'diag.series.value', {
        from: formatMiB(series[0]),
        to: formatMiB(series[series.length - 1]),
        n: series.length,
        shape: SHAPE_WORDS[best.incident.series.memoryShape] ? t(loc, SHAPE_WORDS[best.incident.series.memoryShape]) : best.incident.series.memoryShape,
      }),
    });
  }
  if (fields.length) sections.push({ heading: t(loc, 'diag.heading.fromLog'), fields });
  if (best.incident.holder.why)
    sections.push({
      key: 'diag.heading.holder',
      heading: t(loc, 'diag.heading.holder'),
      text: t(loc, 'diag.holder.line', {
        holder: best.incident.holder.verdict
          ? HOLDER_NAMES[best.incident.holder.verdict]
            ? t(loc, HOLDER_NAMES[best.incident.holder.verdict])
            : best.incident.holder.verdict
          : t(loc, 'diag.holder.notStated'),
        why: best.incident.holder.why,
      }),
    });
  best.fixes.forEach((fix, i) => {
    const section: ReplySection = { heading: i === 0 ? t(loc, 'diag.heading.fix') : undefined, text: `${i + 1}. ${fix.summary}` };
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
  if (best.evidence.length) sections.push({ heading: t(loc, 'diag.heading.evidence'), code: best.evidence.join('\n') });
  if (others.length)
    sections.push({
      text: t(loc, 'diag.alsoMatched', {
        list: others
          .slice(0, 3)
          .map((d) => `${d.title} (${d.category})`)
          .join('; '),
      }),
    });
  if (notes.length) sections.push({ text: notes.join(' ') });
  return { title: `${best.title} [${best.category}]`, severity, sections, footer: t(loc, 'diag.footer', { rule: best.rule }), rule: best.rule };
}
