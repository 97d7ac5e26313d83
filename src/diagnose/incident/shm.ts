// Who ran out of /dev/shm and how (levers/shm.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface ShmPart {
  /** Who ran out of /dev/shm and how (src/diagnose/levers/shm.ts): NCCL's segment, DataLoader workers, or multiprocessing's semaphores. */
  shmWriter?: 'nccl' | 'workers' | 'semaphore';
  shmSegment?: string;
  shmDisableIgnored?: boolean;
}
