// /gpu diagnose <paste>: the diagnosis of a pasted training log, with the fixes computed from its numbers.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import type { Reply, ReplySection } from '../src/core/reply.js';
import { diagnose, type DiagnoseResult } from '../src/diagnose/diagnose.js';
import { decodeLog, type LogInput } from '../src/diagnose/input.js';
import { formatMiB } from '../src/diagnose/fixes/arithmetic.js';

const FACT_LABELS: [string, string, (v: any) => string][] = [
  ['triedAllocMiB', 'Tried to allocate', formatMiB],
  ['totalCapacityMiB', 'GPU capacity', formatMiB],
  ['freeMiB', 'Free on GPU', formatMiB],
  ['allocatedMiB', 'Allocated by PyTorch', formatMiB],
  ['reservedMiB', 'Reserved by PyTorch', formatMiB],
  ['reservedUnallocatedMiB', 'Reserved, unallocated', formatMiB],
  ['gpuIndex', 'GPU', String],
  ['gpuName', 'GPU model', String],
  ['batch', 'batch', String],
  ['workers', 'workers', String],
  ['imgsz', 'imgsz', String],
  ['cache', 'cache', String],
  ['model', 'model', String],
  ['hostRamGiB', 'Host RAM', (v: number) => `${v} GB`],
];

export function diagnosisReply(result: DiagnoseResult, input?: Pick<LogInput, 'notes'>): Reply {
  const notes = input?.notes ?? [];
  const [best, ...others] = result.diagnoses;
  if (!best) {
    const sections: ReplySection[] = [{ text: 'No GPU or host memory problem recognised in this log (checked: CUDA/HIP out of memory, fragmentation, DataParallel replicas, host OOM kills, shared memory, growing memory, cuBLAS/cuDNN allocation, NCCL, driver/nvidia-smi, device-side asserts).' }];
    if (notes.length) sections.push({ text: notes.join(' ') });
    return { title: 'No diagnosis', severity: 'info', sections };
  }
  const severity = ['device_assert_not_memory', 'nccl_or_distributed', 'driver_or_smi'].includes(best.category) ? 'warning' : 'error';
  const sections: ReplySection[] = [];
  const fields = FACT_LABELS.filter(([k]) => (best.facts as Record<string, unknown>)[k] !== undefined).map(([k, label, fmt]) => ({
    label,
    value: fmt((best.facts as Record<string, unknown>)[k]),
  }));
  if (fields.length) sections.push({ heading: 'From the log', fields });
  best.fixes.forEach((fix, i) => {
    const section: ReplySection = { heading: i === 0 ? 'Fix' : undefined, text: `${i + 1}. ${fix.summary}` };
    const code = [fix.env && Object.entries(fix.env).map(([k, v]) => `export ${k}=${v}`).join('\n'), fix.code, fix.command].filter(Boolean).join('\n');
    if (code) section.code = code;
    sections.push(section);
  });
  if (best.evidence.length) sections.push({ heading: 'Evidence', code: best.evidence.join('\n') });
  if (others.length) sections.push({ text: `Also matched: ${others.slice(0, 3).map((d) => `${d.title} (${d.category})`).join('; ')}` });
  if (notes.length) sections.push({ text: notes.join(' ') });
  return { title: `${best.title} [${best.category}]`, severity, sections, footer: `rule ${best.rule}` };
}

export default defineCommand({
  name: 'diagnose',
  summary: 'Diagnose a pasted training log: CUDA OOM, host OOM kills, shared memory, NCCL, drivers...',
  usage: 'diagnose <paste a log or traceback>',
  options: z.object({ text: z.string() }),
  async run({ text }, ctx) {
    if (text.trim() === '') {
      return { title: 'Nothing to diagnose', severity: 'warning', sections: [{ text: 'Paste the log after `/gpu diagnose` (or attach a .log/.txt file).' }] };
    }
    const input = decodeLog(Buffer.from(text, 'utf8'));
    return diagnosisReply(diagnose(input.text, ctx.services.rules), input);
  },
});
