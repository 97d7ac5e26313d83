// The rank that failed first is the cause; the ranks that waited for it report timeouts and closed peers
// afterwards. When a pasted multi-rank log holds both, an exception of a memory class (a CUDA OOM with its
// message, a host OOM kill) that the log shows BEFORE the waiting ranks' reports is what to fix: the
// collective timeout is its consequence, and raising the timeout would only wait longer for a dead rank.
import type { Category } from './rule-types.js';

/** Rules that only say a rank waited for another (the symptom of a failure elsewhere). */
const WAITING_RULES = new Set(['nccl-collective-timeout', 'nccl-lost-rank']);
/** Failures a rank raises on its own that make the others wait. */
const FIRST_FAILURES = new Set<Category>(['cuda_oom', 'fragmentation', 'replica_oom', 'host_oom_killed', 'cudnn_cublas_alloc']);

/**
 * A rank that dies takes the others down within a few screens of output (its traceback, the launcher's
 * report, the waiting ranks' timeouts); a log that goes on this many lines after the exception shows the
 * run survived it (a retried or skipped batch), so the later report is the failure to fix.
 */
const SURVIVED_AFTER_LINES = 150;

interface Ranked {
  rule: string;
  category: Category;
  firstLine: number;
  /** The first of its lines that is an exception (not prose); undefined when all are prose or log lines. */
  firstExceptionLine?: number;
}

/** `diagnoses` best first; returns them with an earlier rank's own failure ahead of the waiting ranks' report. */
export function orderFirstFailure<T extends Ranked>(diagnoses: T[]): T[] {
  const top = diagnoses[0];
  if (!top || !WAITING_RULES.has(top.rule)) return diagnoses;
  const first = diagnoses.find(
    (d) =>
      FIRST_FAILURES.has(d.category) &&
      d.firstExceptionLine !== undefined &&
      d.firstExceptionLine < top.firstLine &&
      top.firstLine - d.firstExceptionLine <= SURVIVED_AFTER_LINES,
  );
  if (!first) return diagnoses;
  return [first, ...diagnoses.filter((d) => d !== first)];
}
