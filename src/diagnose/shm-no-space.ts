// A write that failed for room (ENOSPC: "OSError: [Errno 28] No space left on device") in a paste that names shared
// memory (issue 23, recognition): /dev/shm is a tmpfs of 64 MB in a container or a pod by default, and PyTorch's
// DataLoader workers, multiprocessing and NCCL write there, so ENOSPC beside it is /dev/shm full, not the disk. The
// shm-exhausted rule reads the two on one line; real reports put them apart: the error quoted, then "I think the shared
// memory gets filled", or `df -h` told in a sentence ("the only change ... is the `shm` device"), or a traceback through
// torch's multiprocessing frames (a batch handed to the main process through /dev/shm), or a DataLoader in a container.
//
// Not a df row of /dev/shm with room left ("shm 64M 0 64M 0% /dev/shm"): the measurement says it is not full. Not a
// line that only states the shm setting ("--shm-size=16g"): the setting, not what filled. Bounded, linear.
import type { LogText } from './normalize.js';

const MAX_LINES = 600;
const MAX_LINE = 1200;

const NO_SPACE = /\[Errno 28\]|\bENOSPC\b|No space left on device|设备上没有空间/i;
const SHM_NAMED = /\/dev\/shm\b|\bshm\b|\bshared[ -]memory\b|共享内存/i;
// torch's multiprocessing hands a worker's batch over /dev/shm: its frames above the ENOSPC name the writer.
const SHM_WRITER_FRAME = /torch[/\\]multiprocessing[/\\](?:reductions|queue)\.py|multiprocessing[/\\](?:queues|reduction|heap)\.py/;
// A df row of /dev/shm below 90% use (90-100% is the shm-exhausted rule's own measurement), and the shm setting named.
const DF_ROW_ROOM = /\s(?:\d|[1-8]\d)%\s{1,20}\/dev\/shm\s{0,4}$/;
const SHM_SETTING = /\bshm[-_ ]size\b|--ipc[= ]host/i;
// A DataLoader in a container ("'No space left on device' when enumerating over the DataLoader ... on docker"): its
// workers' batches pass through the container's /dev/shm (64 MB by default), the likeliest thing to fill.
const DATALOADER = /\bDataLoader\b|dataloader\.py|\bnum_workers\b/i;
const CONTAINER = /\b(?:docker|container|kubernetes|k8s|kubeflow|pod)\b/i;

/** The line of the ENOSPC where the paste names shared memory or its writer elsewhere; undefined where it does not. */
export function noSpaceBesideShm(log: LogText): number | undefined {
  const lines = Math.min(log.lineCount, MAX_LINES);
  let noSpace: number | undefined;
  let shm = false;
  let loader = false;
  let container = false;
  for (let i = 0; i < lines; i++) {
    const line = log.line(i).slice(0, MAX_LINE);
    if (NO_SPACE.test(line)) noSpace ??= i;
    if (SHM_WRITER_FRAME.test(line) || (SHM_NAMED.test(line) && !DF_ROW_ROOM.test(line) && !SHM_SETTING.test(line))) shm = true;
    loader ||= DATALOADER.test(line);
    container ||= CONTAINER.test(line) && !SHM_SETTING.test(line);
  }
  return shm || (loader && container) ? noSpace : undefined;
}
