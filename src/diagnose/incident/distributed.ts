// Distributed training: ZeRO, ranks, NCCL, rendezvous, DDP reducer errors.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface DistributedPart {
  /** DeepSpeed ZeRO stage the run's config or command states (the config's "stage" wins over prose). */
  zeroStage?: number;
  /** Data-parallel ranks the launch states (--nproc_per_node, --num_gpus, num_processes, world_size, "8 x A100"); read under ZeRO and for any training run. */
  worldSize?: number;
  /** GPUs stated beside weights that fill one card, when splitting the model over them is the lever (levers/split-cards.ts). */
  splitGpus?: string;
  /** The paste names sharding the model over GPUs (FSDP, ZeRO-3): a load then shards before it moves (levers/load-lever.ts). */
  shardingNamed?: boolean;
  /** The load already spreads the model over the GPUs (accelerate's load_checkpoint_and_dispatch, device_map="auto"): levers/split-cards.ts. */
  dispatchedOverCards?: boolean;
  /** The config offloads optimizer state or parameters to CPU: the GPU's share is then not this arithmetic. */
  zeroOffload?: boolean;
  /** The per-rank arithmetic as the reply quotes it, '' when the log does not size it ({zeroRanksWhy}). */
  zeroRanksWhy?: string;
  ncclTimeoutMs?: number;
  /** Highest NCCL SeqNum each rank reported in watchdog timeouts. */
  ncclSeqByRank?: Record<string, number>;
  /** Every rank timed out in its group's first collective (SeqNum=1, or "last completed NCCL work: -1"). */
  ncclNeverCompleted?: boolean;
  /** Who never reached the distributed start-up, in words (src/diagnose/rendezvous.ts). */
  rendezvousFinding?: string;
  /** The rank that failed or diverged first, in words (src/diagnose/lost-rank.ts). */
  lostRankFinding?: string;
  /** "Expected to mark a variable ready only once" / "has been marked as ready twice": a hook fired twice. */
  ddpMarkedTwice?: boolean;
  /** The paste turns find_unused_parameters on already (a setting or the user's line, not the error's own advice). */
  ddpFindUnusedSet?: boolean;
  /** The parameter PyTorch names ("with name head.bias", "did not receive grad for rank 0: head.weight"). */
  ddpParameter?: string;
}
