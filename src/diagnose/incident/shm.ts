// Who ran out of /dev/shm and how (levers/shm.ts).
// A typed part of the incident (index.ts); generated from the Facts fields by scripts/codemods/facts-to-incident.mjs.

export interface ShmPart {
  /** Who ran out of /dev/shm and how (src/diagnose/levers/shm.ts): NCCL's segment, DataLoader workers, or multiprocessing's semaphores. */
  shmWriter?: 'nccl' | 'workers' | 'semaphore';
  shmSegment?: string;
  shmDisableIgnored?: boolean;
}
