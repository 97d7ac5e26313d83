// Scores `bin/gpu-doctor diagnose --json` over a folder of real labelled logs (NNN-label.log +
// cases.json), with the same figures as the project's shared scorer (score-diagnose.mjs), so the
// suite needs nothing outside the repo:
//   top1      the first diagnosis's category is one of the case's labels ('unrelated': empty list)
//   harmful   a case that is not about memory capacity whose first fix shrinks the batch
//   concrete  the log states batch (or workers) and the first fix names a smaller one
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLI = new URL('../../bin/gpu-doctor', import.meta.url).pathname;
const NOT_CAPACITY = new Set(['device_assert_not_memory', 'driver_or_smi', 'nccl_or_distributed', 'unrelated']);

export interface EvalCase {
  file: string;
  labels: string[];
  source?: string;
  facts?: Record<string, unknown>;
  expected_fix?: string;
}
interface Fix {
  summary: string;
  changes?: Record<string, unknown>;
}
interface Contract {
  diagnoses: { rule: string; category: string; fixes?: Fix[] }[];
}
export interface EvalScore {
  n: number;
  top1: number;
  harmful: number;
  concrete: number;
  concreteOf: number;
  failed: number;
  rows: string[];
}

/** The setting's usual spellings: batch, batch_size, batch-size, --bs; workers, num_workers. */
function states(text: string, key: 'batch' | 'workers', value: number): boolean {
  const name = key === 'batch' ? 'batch(?:[_-]?size)?|\\bbs' : '(?:num_)?workers';
  return new RegExp(`(?:${name})[^\\n\\d-]{0,4}${value}\\b`, 'i').test(text);
}

export async function scoreDir(dir: string, concurrency = 4): Promise<EvalScore> {
  const cases = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as EvalCase[];
  const s: EvalScore = { n: cases.length, top1: 0, harmful: 0, concrete: 0, concreteOf: 0, failed: 0, rows: [] };
  const outs: (Contract | Error)[] = new Array(cases.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < cases.length; i = next++) {
        try {
          const { stdout } = await run('node', [CLI, 'diagnose', '--json', join(dir, cases[i].file)], { timeout: 30_000, maxBuffer: 64 << 20 });
          outs[i] = JSON.parse(stdout) as Contract;
        } catch (e) {
          outs[i] = e as Error;
        }
      }
    }),
  );
  cases.forEach((c, i) => {
    const out = outs[i];
    if (out instanceof Error) {
      s.failed++;
      s.rows.push(`${c.file}: FAILED ${out.message.split('\n')[0].slice(0, 120)}`);
      return;
    }
    const first = out.diagnoses[0];
    const ok = first ? c.labels.includes(first.category) : c.labels.includes('unrelated');
    if (ok) s.top1++;
    const fix = first?.fixes?.[0];
    const harm = c.labels.every((l) => NOT_CAPACITY.has(l)) && typeof fix?.changes?.batch === 'number';
    if (harm) s.harmful++;
    const text = readFileSync(join(dir, c.file), 'utf8');
    const batch = c.facts?.batch;
    const workers = (c.facts?.workers ?? c.facts?.num_workers) as unknown;
    let conc = '';
    const firstChange = (key: string) => first?.fixes?.find((f) => typeof f.changes?.[key] === 'number')?.changes?.[key] as number | undefined;
    if (['cuda_oom', 'replica_oom'].includes(c.labels[0]) && Number.isInteger(batch) && (batch as number) > 1 && states(text, 'batch', batch as number)) {
      s.concreteOf++;
      const got = ok ? firstChange('batch') : undefined;
      const good = got !== undefined && got >= 1 && got < (batch as number);
      if (good) s.concrete++;
      conc = ` batch ${batch}->${got ?? '?'}${good ? '' : ' (not concrete)'}`;
    } else if (c.labels[0] === 'host_oom_killed' && Number.isInteger(workers) && (workers as number) > 4 && states(text, 'workers', workers as number)) {
      s.concreteOf++;
      const got = ok ? firstChange('workers') : undefined;
      const good = got !== undefined && got >= 0 && got <= 4;
      if (good) s.concrete++;
      conc = ` workers ${workers}->${got ?? '?'}${good ? '' : ' (not concrete)'}`;
    }
    s.rows.push(`${c.file}: ${ok ? 'ok ' : 'MISS'} want ${c.labels.join('|')} got ${first ? `${first.category} (${first.rule})` : 'none'}${harm ? ' HARMFUL' : ''}${conc}`);
  });
  return s;
}

export const scoreLine = (s: EvalScore) => `top1 ${s.top1}/${s.n} (${Math.round((100 * s.top1) / s.n)}%), harmful ${s.harmful}, concrete ${s.concrete}/${s.concreteOf}, failed ${s.failed}`;
