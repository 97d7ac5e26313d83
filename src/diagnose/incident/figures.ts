// The OOM message's own figures (the last OOM message in the log; XLA's HBM report; vLLM's start-up check), in MiB.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface FiguresPart {
  triedAllocMiB?: number;
  totalCapacityMiB?: number;
  freeMiB?: number;
  allocatedMiB?: number;
  reservedMiB?: number;
  reservedUnallocatedMiB?: number;
  cachedMiB?: number;
  thisProcessMiB?: number;
  /** PyTorch's cudaMallocAsync backend's "Currently allocated" (its pytorch_used_bytes): every block this process's PyTorch holds, with no reserved figure beside it. */
  asyncUsedMiB?: number;
  /** CUDA's own "CUDA error: out of memory" (or the pre-1.0 "cuda runtime error (2)"): an allocation outside PyTorch's caching allocator, such as the context or the first tensor. */
  runtimeOom?: boolean;
  /** Free on the device when the process started, before it allocated anything (vLLM's start-up check). */
  startupFreeMiB?: number;
  /** The memory TensorFlow created its GPU device with as the job started (nearly all that was free then), in MiB. */
  tfDeviceMiB?: number;
  /** XLA's compile-time HBM report: what the program needs in all, and how much of it is arguments (parameters and inputs) and program temporaries. */
  xlaUsedMiB?: number;
  xlaArgumentsMiB?: number;
  xlaProgramMiB?: number;
  gpuIndex?: number;
}
