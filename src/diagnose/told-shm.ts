// Shared memory told short in the report's words (issue 23, recognition: a report in words is read as a report). A
// sentence that names /dev/shm or shared memory (共享内存) with a word of shortage ("the low shared memory available
// (64M)", "/dev/shm is too small", "shm only has 64M", "共享内存不足") is the account of the failure: the DataLoader's
// workers, torch.multiprocessing and NCCL hand tensors over /dev/shm, which a container gets at 64 MB unless its launcher
// sizes it. The shm-exhausted rule answers it (told-hits.ts), below every rule that recognised a memory message itself.
//
// Not read: log lines, frames and exception lines (the message rules read those), a df row (a measurement the shm rule
// reads itself), a line that only states the shm setting ("--shm-size=16g"), a clause that supposes, avoids or denies
// the shortage ("if /dev/shm is too small", "make sure shm is not full"). Bounded and linear.
import type { LogText } from './normalize.js';
import { isExceptionLine } from './final-error.js';

const MAX_LINES = 600;
const MAX_LINE = 1200;

const SHM = /\/dev\/shm\b|\bshm\b|\bshared[ -]memory\b|共享内存/i;
// Shortage: low, small, limited, not enough, full, ran out, exhausted, "only 64M"; 不足, 不够, 太小, 满, "只有64M".
const SHORT =
  /\b(?:low|small|too\s{1,3}small|limited|insufficient|not\s{1,3}enough|full|fill(?:s|ed)?\s{1,3}up|runs?\s{1,3}out|ran\s{1,3}out|exhausted)\b|\bonly\s{1,3}(?:has\s{1,3}|have\s{1,3}|had\s{1,3})?\(?\d{1,4}(?:\.\d{1,2})?\s{0,2}(?:[KMG]i?B?|MB|GB)\b|不足|不够|太小|满了|只有\s{0,2}\d{1,4}\s{0,2}[KMGkmg]/i;
// A supposition, an avoidance or a denial before the shortage: no account of one.
const NOT_TOLD =
  /\b(?:if|whether|avoid\w{0,3}|prevent\w{0,3}|in\s{1,3}case|make\s{1,3}sure|ensure|not|no|never|isn['\u2019]?t|wasn['\u2019]?t)\b|如果|避免|防止|没有|并不|不是/i;
const SETTING = /\bshm[-_ ]size\b|--ipc[= ]host/i;
// Frames, logger lines, df rows, code: the message rules read them.
const NOT_PROSE =
  /^\s{0,12}File "|^\s{0,8}Traceback|\b(?:INFO|WARNING|DEBUG|ERROR|WARN)\b|^\s{0,8}\[?\d{2,4}[-/]\d{2}|^\s{0,8}(?:\$|>>>|#|import |from \S{1,80} import )|\d%\s{1,20}\/dev\/shm/;
const CLAUSE = /[.!?;](?=\s|$)|[。！？；，,]/;

/** The line where the report tells shared memory short; undefined where no sentence of the paste tells it. */
export function toldShmShort(log: LogText): number | undefined {
  const lines = Math.min(log.lineCount, MAX_LINES);
  for (let i = 0; i < lines; i++) {
    const line = log.line(i);
    if (line.length > MAX_LINE || !SHM.test(line) || NOT_PROSE.test(line) || SETTING.test(line) || isExceptionLine(line)) continue;
    // The shortage and shared memory in one clause, or the clause after the one that names it ("The reason is the low
    // shared memory available (64M)").
    for (const clause of line.split(CLAUSE).slice(0, 24)) {
      if (!SHM.test(clause)) continue;
      const short = SHORT.exec(clause);
      if (short && !NOT_TOLD.test(clause.slice(0, short.index))) return i;
    }
  }
  return undefined;
}
