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
  /** Ray's own figure of what /dev/shm has ("67108864 bytes"). */
  shmAvailable?: string;
  /** NCCL's shm_open was refused (Permission denied): /dev/shm is not writable for this user. */
  shmDenied?: boolean;
  /** NCCL's segment size as it printed it ("7340384 bytes"). */
  shmSegment?: string;
  /** The paste sets NCCL_SHM_DISABLE, yet NCCL still created a segment: the setting never reached that process. */
  shmDisableIgnored?: boolean;
}

const NCCL_SEGMENT =
  /(?:Error while creating shared memory segment\s{0,3}(?:\/dev\/shm\/)?nccl-[\w-]{1,80}\s{0,3}\(size (\d{1,12})\)|\bncclShmOpen\b|NCCL WARN[^\n]{0,80}(?:posix_fallocate failed|failed to extend \/dev\/shm\/nccl-))/;
const WORKERS =
  /unable to (?:write to|allocate shared memory\(shm\) for) file\s{0,3}<\/torch_|dataloader.s workers are out of shared|insufficient shared memory \(shm\)|unable to open shared memory object|bus error encountered in (?:DataLoader )?worker|DataLoader worker \(pid\(?s?\)? ?\d{1,9}\)? is killed by signal: Bus error/i;
// Ray keeps its object store (plasma) in /dev/shm and says so when /dev/shm is smaller than the store it wants.
const OBJECT_STORE =
  /object store is using \/tmp instead of \/dev\/shm because \/dev\/shm has only (\d{1,15}) bytes|object store size[^\n]{0,60}exceeds[^\n]{0,40}\/dev\/shm/;
// Any other store that sizes itself in /dev/shm and says so (Arrow Plasma: "System memory request exceeds memory available
// in /dev/shm. The request is for N bytes, and the amount available is M bytes"): its own size is the second lever.
const STORE_OVER_SHM = /\b(?:request|size|store)\b[^\n]{0,80}\bexceeds\b[^\n]{0,40}\b(?:available in|size of) \/dev\/shm/;
const STORE_AVAILABLE = /amount available is (\d{1,15}) bytes/;
// Only the signal is in the paste (a rank's "exitcode: -7", "Signal 7 (SIGBUS)", the shell's "Bus error"): no library
// says who wrote to /dev/shm, so the reply names the signal, not DataLoader workers.
const SIGBUS = /exitcode\s{0,2}:\s{0,2}-7\b|exits with return code = -7\b|\bSignal 7 \(SIGBUS\)|\bSIGBUS\b|\bBus error\b|\bbus error\b|总线错误/;
// NCCL's WARN gives the errno of its shm_open: "Permission denied" is who may write /dev/shm, not its size.
const DENIED = /NCCL WARN Call to shm_open failed : Permission denied/;
// Python's multiprocessing locks and queues are POSIX semaphores, files in /dev/shm on Linux: SemLock's frame.
const SEMAPHORE = /_multiprocessing\.SemLock\(|multiprocessing\/synchronize\.py", line \d{1,6}, in __init__/;
// pandarallel passes each worker's chunk as a pickle file in its "memory file system" (MEMORY_FS_ROOT, /dev/shm):
// its INFO line, its 1.5 message, its frames or its files.
const MEMORY_FS =
  /Pandarallel will use Memory file system|you use Memory File System and you don.t have enough|pandarallel\/(?:core|pandarallel)\.py|pandarallel_(?:input|output)_\w{1,40}\.pickle/;
const SHM_DISABLE = /\bNCCL_SHM_DISABLE["']?\s{0,3}[=:]\s{0,3}["']?1\b/;
const MAX_LINE = 2000;

/** Which writer ran out of /dev/shm, read from the library's own lines (NCCL first: its segment names it). */
export function readShm(log: LogText): ShmFacts {
  const out: ShmFacts = {};
  let disable = false;
  let semaphore = false;
  let sigbus = false;
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
    if (out.shmWriter === undefined && line.includes('andarallel') && MEMORY_FS.test(line)) out.shmWriter = 'memory_fs';
    if (out.shmWriter === undefined && SEMAPHORE.test(line)) semaphore = true;
    if (out.shmWriter === undefined && line.includes('object store')) {
      const m = OBJECT_STORE.exec(line);
      if (m) {
        out.shmWriter = 'object_store';
        if (m[1]) out.shmAvailable = `${m[1]} bytes`;
      }
    }
    if (out.shmWriter === undefined && line.includes('/dev/shm') && STORE_OVER_SHM.test(line)) out.shmWriter = 'store';
    if (out.shmWriter === 'store' && out.shmAvailable === undefined) {
      const m = STORE_AVAILABLE.exec(line);
      if (m) out.shmAvailable = `${m[1]} bytes`;
    }
    if (!sigbus && SIGBUS.test(line)) sigbus = true;
    if (DENIED.test(line)) out.shmDenied = true;
  }
  if (out.shmWriter === undefined && semaphore) out.shmWriter = 'semaphore';
  if (out.shmWriter === undefined && sigbus) out.shmWriter = 'signal';
  if (disable && out.shmWriter === 'nccl') out.shmDisableIgnored = true;
  return out;
}

/** The shm fix in the words of its writer and the flag of the place it runs. */
export function shmFix(f: Incident & ShmFacts, loc: Locale | undefined): { summary: string; command?: string } {
  const container = f.environment.detected?.container;
  const how = t(loc, container === 'kubernetes' ? 'lever.shm.howK8s' : container === 'docker' ? 'lever.shm.howDocker' : 'lever.shm.howAny');
  const command = container === 'kubernetes' ? undefined : 'docker run --ipc=host ...  (or --shm-size=8g)';
  if (f.shm.shmWriter === 'nccl' && f.shm.shmDenied) return { summary: t(loc, 'lever.shm.ncclDenied') };
  if (f.shm.shmWriter === 'nccl') {
    const segment = f.shm.shmSegment ? t(loc, 'lever.shm.segment', { size: f.shm.shmSegment }) : '';
    const ignored = f.shm.shmDisableIgnored ? t(loc, 'lever.shm.disableIgnored') : '';
    return { summary: t(loc, 'lever.shm.nccl', { segment, how, ignored }), command };
  }
  if (f.shm.shmWriter === 'object_store') {
    const available = f.shm.shmAvailable ? t(loc, 'lever.shm.available', { size: f.shm.shmAvailable }) : '';
    return { summary: t(loc, 'lever.shm.objectStore', { available, how }), command };
  }
  if (f.shm.shmWriter === 'store') {
    const available = f.shm.shmAvailable ? t(loc, 'lever.shm.available', { size: f.shm.shmAvailable }) : '';
    return { summary: t(loc, 'lever.shm.store', { available, how }), command };
  }
  if (f.shm.shmWriter === 'memory_fs') return { summary: t(loc, 'lever.shm.memoryFs', { how }), command };
  if (f.shm.shmWriter === 'signal') return { summary: t(loc, 'lever.shm.signal', { how }), command };
  if (f.shm.shmWriter === 'semaphore') return { summary: t(loc, 'lever.shm.semaphore', { how }), command };
  return { summary: t(loc, 'lever.shm.workers', { how }), command };
}
