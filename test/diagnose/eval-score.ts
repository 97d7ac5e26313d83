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
import { diagnoseOutput } from './corpus-case.js';

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
          // The CLI's own entry in this process (corpus-case.ts): a Node start-up per case was most of this scorer's time.
          outs[i] = JSON.parse(await diagnoseOutput(['--json', join(dir, cases[i].file)])) as Contract;
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
    const workers = c.facts?.workers ?? c.facts?.num_workers;
    let conc = '';
    const firstChange = (key: string) => first?.fixes?.find((f) => typeof f.changes?.[key] === 'number')?.changes?.[key] as number | undefined;
    if (['cuda_oom', 'replica_oom'].includes(c.labels[0]) && Number.isInteger(batch) && (batch as number) > 1 && states(text, 'batch', batch as number)) {
      s.concreteOf++;
      const got = ok ? firstChange('batch') : undefined;
      const good = got !== undefined && got >= 1 && got < (batch as number);
      if (good) s.concrete++;
      conc = ` batch ${String(batch)}->${got ?? '?'}${good ? '' : ' (not concrete)'}`;
    } else if (c.labels[0] === 'host_oom_killed' && Number.isInteger(workers) && (workers as number) > 4 && states(text, 'workers', workers as number)) {
      s.concreteOf++;
      const got = ok ? firstChange('workers') : undefined;
      const good = got !== undefined && got >= 0 && got <= 4;
      if (good) s.concrete++;
      conc = ` workers ${String(workers)}->${got ?? '?'}${good ? '' : ' (not concrete)'}`;
    }
    s.rows.push(
      `${c.file}: ${ok ? 'ok ' : 'MISS'} want ${c.labels.join('|')} got ${first ? `${first.category} (${first.rule})` : 'none'}${harm ? ' HARMFUL' : ''}${conc}`,
    );
  });
  return s;
}

export const scoreLine = (s: EvalScore) =>
  `top1 ${s.top1}/${s.n} (${Math.round((100 * s.top1) / s.n)}%), harmful ${s.harmful}, concrete ${s.concrete}/${s.concreteOf}, failed ${s.failed}`;

// ---- Expert expectations per log (the untuned corpus): category, harm, lever, and score-fixes checks.

export interface ExpertCase extends EvalCase {
  expected_lever?: string;
  holder?: string;
  confuser?: boolean;
  language?: string;
  category?: string[];
  firstMentions?: string;
  firstNotMentions?: string;
  mentions?: string;
  batchMax?: number;
  workersMax?: number;
  noBatchFirst?: boolean;
  noBatchAny?: boolean;
  noDiagnosis?: boolean;
  commandConsistent?: boolean;
  needFix?: boolean;
}

interface FullFix extends Fix {
  env?: Record<string, string>;
  command?: string;
  code?: string;
}
interface FullContract {
  diagnoses: { rule: string; category: string; fixes?: FullFix[] }[];
  notMemory?: { exception: string; message: string };
}

const MEMORY = new Set(['cuda_oom', 'replica_oom', 'fragmentation', 'host_oom_killed', 'shm_exhausted', 'growing_memory_leak', 'cudnn_cublas_alloc']);
/** A regex written for another engine may carry an inline (?i): JS takes the flag instead. */
const re = (source: string) => new RegExp(source.replace(/^\(\?i\)/, ''), 'i');

/** Words in a fix's summary that name a lever: read by the loose check and, from the first action, by the stricter one. */
const SUMMARY_WORDS = {
  imgsz: /image size|imgsz|resolution|max[-_ ]model[-_ ]len|max_length|cutoff_len|sequence length|seq len|context length/i,
  cache_off: /cache=False|--cache disk|caching images|RAM cache/i,
  free_or_move_gpu: /another process|other process|CUDA_VISIBLE_DEVICES|held outside/i,
  quantize_or_smaller_model: /quantiz|smaller model|load_in_[48]bit|GPTQ|AWQ/i,
  offload_or_zero: /offload|ZeRO|zero_optimization|FSDP|shard/i,
  checkpointing: /checkpointing/i,
  amp: /mixed precision|fp16|bf16|\bamp\b/i,
};

// Not in NAMED below: its words ("per batch") are read there as the batch lever's, so its named-first figure is the loose one.
const GATHER_PER_BATCH = /per batch|each batch|in (?:batches|chunks)|to disk|streaming|generator|preprocess_logits_for_metrics|predict_on_batch/i;

/** How each lever shows in the first fix (its summary, changes, env, command or code). */
const LEVERS: Record<string, (fix: FullFix | undefined, category: string | undefined) => boolean> = {
  batch: (f) => typeof f?.changes?.batch === 'number' || typeof f?.changes?.per_device_train_batch_size === 'number' || /\bbatch\b/i.test(f?.summary ?? ''),
  batch_accumulate: (f) => typeof f?.changes?.batch === 'number' || /\bbatch\b[^.]{0,80}accumulat/i.test(f?.summary ?? ''),
  // "input size": image size for vision, sequence length / context for text (cutoff_len, max_length, vLLM's --max-model-len)
  imgsz: (f) => typeof f?.changes?.imgsz === 'number' || SUMMARY_WORDS.imgsz.test(f?.summary ?? ''),
  cache_off: (f) => f?.changes?.cache === false || SUMMARY_WORDS.cache_off.test(f?.summary ?? ''),
  expandable_segments: (f) => /expandable_segments|max_split_size/i.test(JSON.stringify(f ?? {})),
  free_or_move_gpu: (f) => SUMMARY_WORDS.free_or_move_gpu.test(f?.summary ?? ''),
  quantize_or_smaller_model: (f) => SUMMARY_WORDS.quantize_or_smaller_model.test(f?.summary ?? ''),
  offload_or_zero: (f) => SUMMARY_WORDS.offload_or_zero.test(f?.summary ?? ''),
  checkpointing: (f) => SUMMARY_WORDS.checkpointing.test(f?.summary ?? ''),
  amp: (f) => SUMMARY_WORDS.amp.test(f?.summary ?? ''),
  workers: (f) => typeof f?.changes?.workers === 'number' || /workers/i.test(f?.summary ?? ''),
  shm_size: (f) => /shm/i.test(JSON.stringify(f ?? {})),
  low_cpu_mem_usage: (f) => /low_cpu_mem_usage|fewer processes|each (?:process|rank) loads|ZeRO-3 init|zero3_init|mmap/i.test(f?.summary ?? ''),
  leak_fix: (f) => /empty_cache|\.item\(\)|detach|loss = None/i.test(JSON.stringify(f ?? {})),
  // Eval/inference without autograd: the graph of every eval batch is kept until no_grad/inference_mode.
  no_grad: (f) => /no_grad|inference_mode|requires_grad|\.eval\(\)|torch\.no_grad/i.test(JSON.stringify(f ?? {})),
  // Trainer's evaluation loop keeps every batch's logits on the card until eval_accumulation_steps moves them.
  eval_accumulation: (f) => /eval_accumulation_steps|preprocess_logits_for_metrics|prediction_loss_only/i.test(JSON.stringify(f ?? {})),
  host_ram_or_swap: (f, cat) => cat === 'host_oom_killed' && /swap|RAM|host memory|system memory|--memory|memory limit/i.test(f?.summary ?? ''),
  find_leak: (f) => /memory_summary|_record_memory_history|memory snapshot|tracemalloc|profil|growing_memory/i.test(JSON.stringify(f ?? {})),
  // Outputs gathered over a whole eval/predict set fill host RAM: write or reduce them per batch, predict in chunks.
  gather_per_batch: (f) => GATHER_PER_BATCH.test(f?.summary ?? ''),
  framework_version: (f) => /upgrade|update (?:to|PyTorch|torch|the)|newer (?:version|release)|downgrade|pip install -U/i.test(f?.summary ?? ''),
  // vLLM's share of the card for weights plus KV cache: the first fix turns --gpu-memory-utilization / gpu_memory_utilization.
  gpu_memory_utilization: (f) => /--gpu[-_]memory[-_]utilization|gpu_memory_utilization/i.test(JSON.stringify(f ?? {})),
  xla_mem_fraction: (f) =>
    /XLA_PYTHON_CLIENT_(?:MEM_FRACTION|PREALLOCATE|ALLOCATOR)|allow_growth|memory_fraction|set_memory_growth/i.test(JSON.stringify(f ?? {})),
  nccl_timeout_debug: (_f, cat) => cat === 'nccl_or_distributed',
  driver_fix: (_f, cat) => cat === 'driver_or_smi',
  // Not a memory problem, or a memory error whose first fix says it is not capacity (free >= request,
  // an absurd request): either way no batch, worker or memory setting is offered first.
  not_memory: (f, cat) =>
    cat === undefined ||
    !MEMORY.has(cat) ||
    (/not a full card|not capacity|is not the capacity|not a batch that is a little too big/i.test(f?.summary ?? '') && f?.changes?.batch === undefined),
};

/**
 * Where each lever is *named as an action* in a first fix's summary, for the stricter lever figure: the fallback texts
 * name several levers ("halve the batch, or lower the image size, or ZeRO-3"), so the loose check above credits a lever
 * that is only one option of many. The stricter figure credits the expected lever only when no other lever is named
 * before it. A mention right after a negation ("the batch is not the lever", "without no_grad") names no action.
 */
const NAMED: Record<string, RegExp> = {
  batch: /\bbatch\b/gi,
  imgsz: new RegExp(SUMMARY_WORDS.imgsz.source, 'gi'),
  cache_off: new RegExp(SUMMARY_WORDS.cache_off.source, 'gi'),
  expandable_segments: /expandable_segments|max_split_size/gi,
  free_or_move_gpu: new RegExp(SUMMARY_WORDS.free_or_move_gpu.source, 'gi'),
  quantize_or_smaller_model: new RegExp(SUMMARY_WORDS.quantize_or_smaller_model.source, 'gi'),
  offload_or_zero: new RegExp(SUMMARY_WORDS.offload_or_zero.source, 'gi'),
  checkpointing: new RegExp(SUMMARY_WORDS.checkpointing.source, 'gi'),
  amp: new RegExp(SUMMARY_WORDS.amp.source, 'gi'),
  workers: /workers/gi,
  shm_size: /shm/gi,
  low_cpu_mem_usage: /low_cpu_mem_usage|each (?:process|rank) loads|mmap/gi,
  leak_fix: /empty_cache|\.item\(\)|detach/gi,
  no_grad: /no_grad|inference_mode/gi,
  eval_accumulation: /eval_accumulation_steps|preprocess_logits_for_metrics|prediction_loss_only/gi,
  find_leak: /memory_summary|_record_memory_history|memory snapshot|tracemalloc/gi,
  gpu_memory_utilization: /gpu[-_]memory[-_]utilization/gi,
  xla_mem_fraction: /XLA_PYTHON_CLIENT_(?:MEM_FRACTION|PREALLOCATE|ALLOCATOR)|allow_growth|memory_fraction|set_memory_growth/gi,
};
/** Levers judged by the category alone: the stricter figure takes the loose verdict. */
const CATEGORY_LEVERS = new Set(['nccl_timeout_debug', 'driver_fix', 'not_memory', 'host_ram_or_swap', 'framework_version']);
const NEGATED_BEFORE = /(?:\bnot|n't|\bno|\bwithout|\binstead of|\brather than|\balready|\bnever)\b[^.;:]{0,30}$/i;

/**
 * Where the summary starts telling the user what to do: the first clause that opens with an imperative verb
 * ("Load with low_cpu_mem_usage=True", "...: turn on gradient checkpointing"). What comes before it describes the
 * failure ("checkpoint shards stopped at 14%", "2 bytes per parameter in fp16") and names no lever.
 */
const ACTION_CLAUSE =
  /(?:^|[.:;!?]\s+)(?:load|use|turn|set|wrap|run|reduce|lower|halve|shorten|move|free|stop|kill|add|pass|enable|start|pick|give|raise|increase|mount|launch|keep|resize|tile|split|quantize|train|replace|upgrade|downgrade|install|export|put|drop|cut|accumulate|offload|restart|switch|limit|cap|detach|convert|apply|make|shrink|disable|sum|collect|gather|iterate|release|unset|leave|remove|serve|lend|shard|fall back)\b/i;

/** The first position, from the summary's first action clause, where it names `lever` (structured changes: 0), or -1. */
function namedAt(lever: string, fix: FullFix | undefined): number {
  if (lever === 'batch' && typeof fix?.changes?.batch === 'number') return 0;
  if (lever === 'imgsz' && typeof fix?.changes?.imgsz === 'number') return 0;
  if (lever === 'workers' && typeof fix?.changes?.workers === 'number') return 0;
  const whole = fix?.summary ?? '';
  const action = ACTION_CLAUSE.exec(whole);
  const summary = action ? whole.slice(action.index) : whole;
  const pattern = NAMED[lever];
  if (!pattern) return -1;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(summary); m; m = pattern.exec(summary)) {
    const sentenceStart = Math.max(summary.lastIndexOf('. ', m.index), summary.lastIndexOf('; ', m.index), 0);
    if (!NEGATED_BEFORE.test(summary.slice(sentenceStart, m.index))) {
      pattern.lastIndex = 0;
      return m.index;
    }
  }
  return -1;
}

/** The expected lever is in the first fix (the loose check) and no other lever is named as an action before it. */
export function leverNamedFirst(expected: string, fix: FullFix | undefined, category: string | undefined): boolean {
  if (!LEVERS[expected](fix, category)) return false;
  if (CATEGORY_LEVERS.has(expected)) return true;
  const own = namedAt(expected, fix);
  const at = own === -1 ? 0 : own;
  return Object.keys(NAMED).every((other) => {
    if (other === expected || (expected === 'batch_accumulate' && other === 'batch')) return true;
    const pos = namedAt(other, fix);
    return pos === -1 || pos >= at;
  });
}

/** The fix's opening clause tells the user to free or leave the card (not a conditional check "if another process..."). */
const freesFirst = (summary: string) => {
  const opening = summary.split(/[.:;](?:\s|$)/)[0];
  return /another process|other process|held outside|CUDA_VISIBLE_DEVICES/i.test(opening) && !/\bif\b|check|experiment/i.test(opening);
};

export interface ExpertScore {
  n: number;
  category: number;
  harmful: number;
  harmfulStrict: number;
  lever: number;
  /** The expected lever is the first lever the first fix names as an action (the stricter figure). */
  leverFirst: number;
  leverOf: number;
  checksPassed: number;
  failed: number;
  rows: string[];
}

/**
 * `cli` runs `gpu-doctor diagnose --json` per log (the public surface, ~0.3 s each); `inprocess` runs the
 * same code the CLI runs (readLogFile, diagnose, toJsonContract) in this process, for large corpora.
 */
export async function scoreExpertDir(dir: string, runner: 'cli' | 'inprocess' = 'inprocess', concurrency = 4): Promise<ExpertScore> {
  const cases = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as ExpertCase[];
  const s: ExpertScore = {
    n: cases.length,
    category: 0,
    harmful: 0,
    harmfulStrict: 0,
    lever: 0,
    leverFirst: 0,
    leverOf: 0,
    checksPassed: 0,
    failed: 0,
    rows: [],
  };
  const outs: (FullContract | Error)[] = new Array(cases.length);
  if (runner === 'inprocess') {
    const [{ loadRuleBase }, { diagnose }, { readLogFile }, { toJsonContract }] = await Promise.all([
      import('../../src/diagnose/rule-base.js'),
      import('../../src/diagnose/diagnose.js'),
      import('../../src/diagnose/input.js'),
      import('../../src/diagnose/contract.js'),
    ]);
    const rules = await loadRuleBase();
    for (let i = 0; i < cases.length; i++) {
      try {
        const input = await readLogFile(join(dir, cases[i].file));
        outs[i] = JSON.parse(JSON.stringify(toJsonContract(diagnose(input.text, rules), input))) as FullContract;
      } catch (e) {
        outs[i] = e as Error;
      }
    }
  } else {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < cases.length; i = next++) {
          try {
            const { stdout } = await run('node', [CLI, 'diagnose', '--json', join(dir, cases[i].file)], { timeout: 30_000, maxBuffer: 64 << 20 });
            outs[i] = JSON.parse(stdout) as FullContract;
          } catch (e) {
            outs[i] = e as Error;
          }
        }
      }),
    );
  }
  cases.forEach((c, i) => {
    const out = outs[i];
    if (out instanceof Error) {
      s.failed++;
      s.rows.push(`${c.file}: FAILED ${out.message.split('\n')[0].slice(0, 120)}`);
      return;
    }
    const d = out.diagnoses[0];
    const fixes = d?.fixes ?? [];
    const first = fixes[0];
    const misses: string[] = [];
    const catOk = d ? c.labels.includes(d.category) : c.labels.includes('unrelated');
    if (catOk) s.category++;
    else misses.push(`category ${d?.category ?? 'none'} (${d?.rule ?? '-'}), want ${c.labels.join('|')}`);
    const shrinks = typeof first?.changes?.batch === 'number';
    if (c.labels.every((l) => NOT_CAPACITY.has(l)) && shrinks) {
      s.harmful++;
      misses.push('HARMFUL: first fix shrinks the batch');
    }
    // Strict harm (issue 23): the batch changed first where the label's lever is not the batch, the card
    // "freed" where the process holds it itself, or allocator settings first for a capacity problem.
    const batchLever = ['batch', 'batch_accumulate'].includes(c.expected_lever ?? '');
    const strict =
      (shrinks && c.expected_lever !== undefined && !batchLever) ||
      (c.holder !== undefined && c.holder !== 'other_process' && c.expected_lever !== 'free_or_move_gpu' && freesFirst(first?.summary ?? '')) ||
      (c.expected_lever !== undefined &&
        c.expected_lever !== 'expandable_segments' &&
        MEMORY.has(d?.category ?? '') &&
        !['allocator_cache', 'not_capacity', 'n/a'].includes(c.holder ?? 'n/a') &&
        /expandable_segments|max_split_size/i.test(first?.summary ?? ''));
    if (strict) {
      s.harmfulStrict++;
      misses.push('HARMFUL (strict): first fix pulls a lever the label rules out');
    }
    if (c.expected_lever && LEVERS[c.expected_lever]) {
      s.leverOf++;
      const namedFirst = leverNamedFirst(c.expected_lever, first, d?.category);
      if (namedFirst) s.leverFirst++;
      if (LEVERS[c.expected_lever](first, d?.category)) {
        s.lever++;
        if (!namedFirst) misses.push(`lever ${c.expected_lever} named after another lever: ${(first?.summary ?? '').slice(0, 90)}`);
      } else misses.push(`lever ${c.expected_lever} not in first fix: ${(first?.summary ?? 'none').slice(0, 90)}`);
    }
    const nums = (k: string) => fixes.map((f) => f.changes?.[k]).filter((v): v is number => typeof v === 'number');
    const checks: [boolean, string][] = [];
    if (c.category) checks.push([c.category.includes(d?.category ?? 'unrelated'), 'category check']);
    if (c.batchMax) checks.push([nums('batch').some((b) => b >= 1 && b <= c.batchMax!), `batch <= ${c.batchMax}`]);
    if (c.workersMax !== undefined) checks.push([nums('workers').some((w) => w >= 0 && w <= c.workersMax!), `workers <= ${c.workersMax}`]);
    if (c.noBatchFirst) checks.push([!shrinks, 'no batch first']);
    if (c.noBatchAny) checks.push([nums('batch').length === 0, 'no batch at all']);
    if (c.needFix) checks.push([fixes.length > 0, 'a fix']);
    if (c.firstMentions) checks.push([re(c.firstMentions).test(JSON.stringify(first ?? '')), `first mentions /${c.firstMentions}/`]);
    if (c.firstNotMentions) checks.push([!re(c.firstNotMentions).test(JSON.stringify(first ?? '')), `first not /${c.firstNotMentions}/`]);
    if (c.mentions) checks.push([re(c.mentions).test(JSON.stringify(fixes)), `mentions /${c.mentions}/`]);
    if (c.noDiagnosis) checks.push([!d || (!MEMORY.has(d.category) && nums('batch').length === 0 && nums('workers').length === 0), 'no memory diagnosis']);
    const failedChecks = checks.filter(([ok]) => !ok).map(([, what]) => what);
    if (failedChecks.length === 0) s.checksPassed++;
    else misses.push(`checks: ${failedChecks.join(', ')}`);
    s.rows.push(`${c.file}: ${misses.length ? 'MISS ' + misses.join('; ') : 'ok'}`);
  });
  return s;
}

export const expertLine = (s: ExpertScore) =>
  `category ${s.category}/${s.n} (${Math.round((100 * s.category) / s.n)}%), harmful ${s.harmful} (strict ${s.harmfulStrict}), first-fix lever ${s.lever}/${s.leverOf} (${Math.round((100 * s.lever) / Math.max(1, s.leverOf))}%, named first ${s.leverFirst}), all checks ${s.checksPassed}/${s.n}, failed ${s.failed}`;
