// The rule hits a paste's words add or take back (issue 23, recognition; the grammar is told-failure.ts).
// - A memory failure told in words anywhere in the paste speaks only where no rule's diagnosis recognised a memory
//   failure itself (withoutToldWhereRecognised, once the diagnoses are made) and the paste ends in no exception of another kind (a device mismatch, a KeyError: the error's type wins). It is
//   answered by the rules that read a report's words, below every message rule (oom-reported-in-words and
//   host-oom-reported-in-words at priority 60, the *-growth-reported rules for a climb).
// - A memory rule whose only evidence is sentences that deny the failure ("to avoid CUDA out of memory", "no OOM",
//   "is 24 GB enough?") has no evidence, unless another sentence of the paste tells the failure; and one whose only
//   evidence is sentences never speaks where the paste ends in an exception of another kind.
import type { RuleBase } from './rule-base.js';
import type { RuleHit } from './match.js';
import type { LogText } from './normalize.js';
import type { Category } from './rule-types.js';
import { endsNotMemory, finalOrLoggedError } from './final-error.js';
import { readToldFailure, type ToldFailure, type ToldKind } from './told-failure.js';
import type { Incident } from './incident/index.js';
import { climbOverRun } from './growth-oom.js';
import { toldClimbTiesWorkers } from './levers/workers.js';
import { noSpaceBesideShm } from './shm-no-space.js';
import { otherSettingLines } from './memory-named.js';
import { toldShmShort } from './told-shm.js';

const NOT_FAILURE_TEXT = 'The caller indicates that this is not a failure';
const ALLOCATOR_NOT_FAILURE = new RegExp(NOT_FAILURE_TEXT);

/** The rule that answers each kind of told failure. */
const RULE_OF: Record<ToldKind, string> = {
  gpu_oom: 'oom-reported-in-words',
  host_oom: 'host-oom-reported-in-words',
  gpu_growth: 'gpu-memory-growth-reported',
  host_growth: 'host-ram-growth-reported',
};

// The categories each told kind is an account of (a climb ends in an OOM or a kill, so it vouches for those too).
const TOLD_CATEGORIES: Record<ToldKind, Set<Category>> = {
  gpu_oom: new Set<Category>(['cuda_oom', 'fragmentation', 'replica_oom', 'cudnn_cublas_alloc']),
  host_oom: new Set<Category>(['host_oom_killed', 'shm_exhausted']),
  gpu_growth: new Set<Category>(['growing_memory_leak']),
  host_growth: new Set<Category>(['growing_memory_leak', 'host_oom_killed']),
};

const MEMORY = new Set<Category>(['cuda_oom', 'fragmentation', 'replica_oom', 'host_oom_killed', 'shm_exhausted', 'growing_memory_leak', 'cudnn_cublas_alloc']);

/**
 * The hits with what the paste's words tell (a told failure added, memory hits on denying sentences only dropped), and
 * the told failure itself: its phase feeds the incident where no frame or sentence of the phase module names one.
 */
export function withToldFailure(log: LogText, base: RuleBase, hits: RuleHit[]): { hits: RuleHit[]; told?: ToldFailure } {
  const { told, denied, spoken } = readToldFailure(log);
  const memory = (h: RuleHit) => MEMORY.has(base.rules[h.rule].category);
  const only = (lines: Set<number>) => (h: RuleHit) => memory(h) && h.lines.length > 0 && h.lines.every((l) => lines.has(l));
  // A memory rule whose only lines are an allocator's retry that succeeded has no failure to answer.
  const retried = notFailureLines(log);
  // A told failure keeps a rule whose lines only deny one where it tells that rule's kind of failure: a climb told ("GPU
  // memory keeps increasing") is no account of the OOM a question only fears ("how do I know I won't run out?").
  const toldKind = (h: RuleHit) => told !== undefined && TOLD_CATEGORIES[told.kind].has(base.rules[h.rule].category);
  const kept = withoutOtherSetting(
    log,
    hits.filter((h) => !only(denied)(h) || toldKind(h)).filter((h) => !only(retried)(h)),
    memory,
  );
  // The paste ends in an exception of another kind: sentences about memory never override its type.
  const last = finalOrLoggedError(log);
  if (last && endsNotMemory(last)) return { hits: kept.filter((h) => !only(spoken)(h)) };
  withShmNoSpace(log, base, kept);
  if (!told) return { hits: kept };
  // The stack's own allocator line says the memory it ran short of was a retry that succeeded (TensorFlow's BFC "The
  // caller indicates that this is not a failure"): with no failure recognised, words about memory do not make one.
  if (!kept.some(memory) && retried.size > 0) return { hits: kept };
  const rule = base.rules.findIndex((r) => r.id === RULE_OF[told.kind]);
  if (rule < 0 || kept.some((h) => h.rule === rule)) return { hits: kept, told };
  return { hits: [...kept, { rule, lines: [told.line], lastLine: told.line, told: true }], told };
}

/**
 * The diagnoses without the one from the report's words where a rule recognised a memory failure itself. A climb told
 * in words is not what an OOM message says (the message says the card ran out, the words how it got there): it stays
 * beside a recognised OOM, and goes only where a rule recognised a climb itself.
 */
export function withoutToldWhereRecognised<T extends { rule: string; category: Category; toldInWords?: boolean; incident: Incident }>(diagnoses: T[]): T[] {
  const recognised = diagnoses.filter((d) => !d.toldInWords && MEMORY.has(d.category));
  if (recognised.length === 0) return diagnoses;
  // The card's climb told over the run beside the card's OOM (a host climb beside a CUDA OOM is another memory, and a
  // climb told with no measure of the run is no evidence against the OOM's figures: the message speaks).
  const keepsClimb = recognised.some((d) => CARD_OOM.has(d.category)) && !recognised.some((d) => d.category === 'growing_memory_leak');
  return diagnoses.filter((d) => !d.toldInWords || (keepsClimb && d.rule === RULE_OF.gpu_growth && climbOverRun(d.incident)));
}

const CARD_OOM = new Set<Category>(['cuda_oom', 'fragmentation', 'replica_oom']);

/**
 * What a told account adds to the incident: a host kill told while the data loads is the data held in host RAM; a climb
 * of the card's memory told against the run's measure is a climb over steps (growth-oom.ts reads it).
 */
export function toldAccount(
  told: ToldFailure | undefined,
  hostGrowthRead = false,
  toldLine = '',
): { host?: { killedLoadingData?: true; hostGrowth?: string; hostGrowthCjk?: true }; series?: { toldClimb: string } } {
  if (told?.kind === 'host_oom' && told.phase === 'data') return { host: { killedLoadingData: true } };
  // A host climb the grammar reads where the workers' reader found none ("the memory usage slowly increase as training
  // progresses", "starts from 0 and increases ... to 6e+4, after which the process is killed"): one account of the
  // climb for every host lever (levers/workers.ts), not two readers that disagree. A rise while loading is no climb.
  // A climb told on the line that names the workers' count ("num_workers 为20时候，内存一直慢慢涨上来") leaves the workers'
  // own reading as it is: their count is the lever that line gives (levers/workers.ts workersFirst).
  if (told?.kind === 'host_growth' && !hostGrowthRead && told.phase !== 'load' && told.phase !== 'data' && !toldClimbTiesWorkers(toldLine))
    return { host: { hostGrowth: told.clause, ...(/[\u3000-\u9fff\uff00-\uffef]/.test(told.clause) ? { hostGrowthCjk: true as const } : {}) } };
  if (told?.kind === 'gpu_growth' && told.overRun) return { series: { toldClimb: told.clause } };
  return {};
}

/** The lines where an allocator says its shortfall was not a failure (TensorFlow's BFC retry warning). */
function notFailureLines(log: LogText): Set<number> {
  const lines = new Set<number>();
  if (!log.buf.includes(NOT_FAILURE_TEXT)) return lines;
  for (let l = 0; l < log.lineCount; l++) if (ALLOCATOR_NOT_FAILURE.test(log.line(l).slice(0, 2000))) lines.add(l);
  return lines;
}

/**
 * ENOSPC where the paste names shared memory apart from it (shm-no-space.ts): the shm-exhausted rule's hit, weaker than
 * a rule's own (a memory message recognised elsewhere speaks instead), where no memory rule recognised anything. Shared
 * memory told short in a sentence (told-shm.ts) is the report's words: its hit is marked told, so it speaks only where no
 * rule's diagnosis recognised a memory failure itself (withoutToldWhereRecognised), a rule's match that made no diagnosis
 * (a growth pattern on the same sentence) does not silence it.
 */
function withShmNoSpace(log: LogText, base: RuleBase, hits: RuleHit[]): void {
  const rule = base.rules.findIndex((r) => r.id === 'shm-exhausted');
  if (rule < 0 || hits.some((h) => h.rule === rule)) return;
  const noSpace = hits.some((h) => MEMORY.has(base.rules[h.rule].category)) ? undefined : noSpaceBesideShm(log);
  const line = noSpace ?? toldShmShort(log);
  if (line !== undefined) hits.push({ rule, lines: [line], lastLine: line, told: true });
}

/**
 * The hits without a memory failure the report shows only as another setting's outcome ("Otherwise, it says" and its
 * block: memory-named.ts) where a memory failure is shown outside it: that one is this run's.
 */
function withoutOtherSetting(log: LogText, hits: RuleHit[], memory: (h: RuleHit) => boolean): RuleHit[] {
  if (!hits.some(memory)) return hits;
  const other = otherSettingLines(log);
  if (other.size === 0) return hits;
  const inOther = (h: RuleHit) => memory(h) && h.lines.length > 0 && h.lines.every((l) => other.has(l));
  if (!hits.some((h) => memory(h) && !inOther(h))) return hits;
  return hits.filter((h) => !inOther(h));
}
