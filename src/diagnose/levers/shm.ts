// /dev/shm that is too small (issue 23): who wrote to it decides the words, where the job runs decides the
// flag. NCCL puts one segment per local peer there ("Error while creating shared memory segment
// /dev/shm/nccl-XXXX (size 7340384)"), DataLoader workers and torch.multiprocessing queues put every batch
// there ("unable to write to file </torch_…>", "unable to allocate shared memory(shm) for file"), and Python's
// multiprocessing keeps its locks' semaphores there (SemLock: "OSError: [Errno 28] No space left on device"). A container
// gets 64 MB unless its launcher says otherwise: Docker/Podman take --shm-size or --ipc=host, a Kubernetes pod
// an emptyDir with medium: Memory at /dev/shm; NCCL_SHM_DISABLE=1 only routes around it (slower) and is the
// fallback. Patterns are fixed library text, bounded (untrusted input, linear).
import type { LogText } from '../normalize.js';
import { t, type Locale } from '../../core/i18n.js';
import type { Incident, ShmPart } from '../incident/index.js';

export type ShmWriter = NonNullable<ShmPart['shmWriter']>;

export interface ShmFacts {
  shmWriter?: ShmWriter;
  /** NCCL's segment size as it printed it ("7340384 bytes"). */
  shmSegment?: string;
  /** The paste sets NCCL_SHM_DISABLE, yet NCCL still created a segment: the setting never reached that process. */
  shmDisableIgnored?: boolean;
}

const NCCL_SEGMENT =
  /(?:Error while creating shared memory segment\s{0,3}(?:\/dev\/shm\/)?nccl-[\w-]{1,80}\s{0,3}\(size (\d{1,12})\)|\bncclShmOpen\b|NCCL WARN[^\n]{0,80}(?:posix_fallocate failed|failed to extend \/dev\/shm\/nccl-))/;
const WORKERS =
  /unable to (?:write to|allocate shared memory\(shm\) for) file\s{0,3}<\/torch_|dataloader.s workers are out of shared|insufficient shared memory \(shm\)|unable to open shared memory object/i;
// Python's multiprocessing locks and queues are POSIX semaphores, files in /dev/shm on Linux: SemLock's frame.
const SEMAPHORE = /_multiprocessing\.SemLock\(|multiprocessing\/synchronize\.py", line \d{1,6}, in __init__/;
const SHM_DISABLE = /\bNCCL_SHM_DISABLE["']?\s{0,3}[=:]\s{0,3}["']?1\b/;
const MAX_LINE = 2000;

/** Which writer ran out of /dev/shm, read from the library's own lines (NCCL first: its segment names it). */
export function readShm(log: LogText): ShmFacts {
  const out: ShmFacts = {};
  let disable = false;
  let semaphore = false;
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (line.includes('NCCL_SHM_DISABLE') && SHM_DISABLE.test(line)) disable = true;
    if (out.shmWriter !== 'nccl' && /nccl|NCCL/.test(line)) {
      const m = NCCL_SEGMENT.exec(line);
      if (m) {
        out.shmWriter = 'nccl';
        if (m[1]) out.shmSegment = `${m[1]} bytes`;
      }
    }
    if (out.shmWriter === undefined && WORKERS.test(line)) out.shmWriter = 'workers';
    if (out.shmWriter === undefined && SEMAPHORE.test(line)) semaphore = true;
  }
  if (out.shmWriter === undefined && semaphore) out.shmWriter = 'semaphore';
  if (disable && out.shmWriter === 'nccl') out.shmDisableIgnored = true;
  return out;
}

/** The shm fix in the words of its writer and the flag of the place it runs. */
export function shmFix(f: Incident & ShmFacts, loc: Locale | undefined): { summary: string; command?: string } {
  const container = f.environment.detected?.container;
  const how = t(loc, container === 'kubernetes' ? 'lever.shm.howK8s' : container === 'docker' ? 'lever.shm.howDocker' : 'lever.shm.howAny');
  const command = container === 'kubernetes' ? undefined : 'docker run --ipc=host ...  (or --shm-size=8g)';
  if (f.shm.shmWriter === 'nccl') {
    const segment = f.shm.shmSegment ? t(loc, 'lever.shm.segment', { size: f.shm.shmSegment }) : '';
    const ignored = f.shm.shmDisableIgnored ? t(loc, 'lever.shm.disableIgnored') : '';
    return { summary: t(loc, 'lever.shm.nccl', { segment, how, ignored }), command };
  }
  if (f.shm.shmWriter === 'semaphore') return { summary: t(loc, 'lever.shm.semaphore', { how }), command };
  return { summary: t(loc, 'lever.shm.workers', { how }), command };
}
