// Host RAM, the DataLoader workers that take it, and what the paste shows of a host-RAM kill: loading, data preparation, the RAM cache.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface HostPart {
  hostRamGiB?: number;
  /** The one host allocation the allocator says failed, in MiB and as the reply quotes it (levers/host-request.ts). */
  hostRequestMiB?: number;
  hostRequest?: string;
  workers?: number;
  /** The report says the kill came while the model was loading ("模型加载Killed", "killed while loading the model"). */
  killedWhileLoading?: boolean;
  /** Killed (host RAM) while the job loaded or prepared its data, before any training step reported a loss. */
  killedLoadingData?: boolean;
  /** Percent shown on the last YOLO "Caching images (N GB)" progress line. */
  cacheProgressPct?: number;
  /** The paste shows a DataLoader worker killed by the host ("DataLoader worker (pid 123) is killed by signal: Killed"). */
  workersShown?: boolean;
  /** A line that says host RAM rose over steps or epochs before the kill, trimmed (the reply quotes it). */
  hostGrowth?: string;
  /** That line is written in Chinese (or holds Chinese): an English reply does not quote it (it says the paste states it). */
  hostGrowthCjk?: boolean;
  /** The code line of a `<listcomp>` frame that iterates a DataLoader: every batch kept in a list, trimmed. */
  loaderCollected?: string;
  /** A sentence that ties host memory to the DataLoader workers ("memory increases when num_workers > 0", "workers=8 caused RAM OOM"), trimmed. */
  growthWorkers?: string;
  /** The report's sentence saying fewer workers were tried and the run still died, trimmed. */
  workersTried?: string;
  /** The worker count as prose sets it ("The num-workers is set to 0"), which the settings' key=value reading misses. */
  workersSetTo?: number;
  /** A DataLoader worker exited without a SIGKILL shown ("exited unexpectedly", a bus error). */
  workerExitNoKill?: boolean;
  /** An evaluation or prediction's outputs over the whole set gathered in host RAM, as the paste shows it (levers/eval-gathered.ts), trimmed. */
  evalGathered?: string;
  /** No such line, but the paste puts the host kill in an evaluation or prediction (levers/eval-gathered.ts), trimmed. */
  evalKilled?: string;
  /** The failure is raised in a child process the job spawned (multiprocessing's spawn_main frame, a SpawnPoolWorker). */
  spawnedChildren?: boolean;
}
