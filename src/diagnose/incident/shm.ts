// Who ran out of /dev/shm and how (levers/shm.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface ShmPart {
  /** Who ran out of /dev/shm and how (src/diagnose/levers/shm.ts): NCCL's segment, DataLoader workers, pandarallel's memory file system, multiprocessing's semaphores, Ray's object store, another store sized above /dev/shm (Arrow Plasma), or only the signal (SIGBUS). */
  shmWriter?: 'nccl' | 'workers' | 'semaphore' | 'object_store' | 'store' | 'memory_fs' | 'signal';
  shmSegment?: string;
  shmAvailable?: string;
  shmDenied?: boolean;
  shmDisableIgnored?: boolean;
}
