// Figures in a non-PyTorch stack's own format: vLLM, TF/XLA's BFC allocator, llama.cpp/ggml, TGI, Ray (stack-figures.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface StackPart {
  /** vLLM: the model's max seq len and the tokens its KV cache can hold. */
  maxModelLen?: number;
  kvCacheTokens?: number;
  /** vLLM's memory profile (v0.6+): its budget (util × card), what the weights, the profiled activation peak and
   *  memory outside PyTorch take of it, and what is left for the KV cache; all GiB. */
  vllmProfile?: { totalGiB: number; util: number; budgetGiB: number; weightsGiB: number; nonTorchGiB: number; peakGiB: number; kvGiB: number };
  /** The same, as the reply shows them ("0.70 × 8.00 GiB = 5.60 GiB", "5.20 GiB"). */
  vllmBudget?: string;
  vllmWeights?: string;
  vllmPeak?: string;
  vllmNonTorch?: string;
  vllmKv?: string;
  /** The --gpu-memory-utilization that would leave the KV cache 10% of the card, when one up to 0.95 does. */
  vllmUtilNeeded?: string;
  /** vLLM v1: the KV cache one request of max_model_len needs and what is left for it ("16.00 GiB"). */
  vllmKvNeeded?: string;
  vllmKvAvailable?: string;
  /** ONNX Runtime's BFCArena: the buffer it failed to allocate, as the reply shows it ("4.00 GiB"). */
  ortRequest?: string;
  ortAskMiB?: number;
  /** faiss-gpu's failed cudaMalloc, as the reply shows it ("1.50 GiB") (levers/eval-post.ts). */
  faissAlloc?: string;
  vllmGpuBlocks?: number;
  /** vLLM found no memory for one KV-cache block, and the engine flags the paste's command sets (levers/vllm-scheduler.ts). */
  vllmZeroBlocks?: boolean;
  vllmFlags?: { tp?: number; util?: number; maxModelLen?: number; maxNumSeqs?: number };
  vllmFlagsSet?: string;
  vllmUtil?: number;
  /** vLLM's start-up check (levers/vllm-startup.ts): free/total, its request, what others hold, a share that fits. */
  vllmStartFree?: string;
  vllmStartAsk?: string;
  vllmStartHeld?: string;
  vllmStartNear?: boolean;
  vllmStartUtilFits?: string;
  /** TensorFlow 1.x's GPU at discovery (levers/tf-start-free.ts): its index, free and total MiB, and what others held
   *  when that was most of the card (as the reply shows it). */
  tfStartGpu?: number;
  tfStartFreeMiB?: number;
  tfStartTotalMiB?: number;
  tfStartHeld?: string;
  /** A later TF discovery in the same paste found most of the card held after the first found it nearly free: what it held, and its free MiB. */
  tfLaterHeld?: string;
  tfLaterFreeMiB?: number;
  /** The report tells TF programs that run together, or a first one that should have ended (levers/tf-own-processes.ts). */
  tfTogether?: true;
  tfTogetherProcesses?: true;
  tfSequential?: true;
  /** TensorFlow's own OOM message is in the paste. */
  tfOom?: true;
  /** The dummy requests of vLLM's sampler warm-up that ran out of memory (max_num_seqs), and half of them. */
  vllmWarmupSeqs?: number;
  vllmWarmupSeqsHalf?: number;
  /** Figures in a non-PyTorch stack's own format (src/diagnose/stack-figures.ts): TF/XLA's BFC allocator (its
   *  name and Stats block), llama.cpp's failed CUDA buffer and what it was for, TGI's prefill, vLLM's blocks. */
  bfcAllocator?: string;
  bfcLimitMiB?: number;
  bfcInUseMiB?: number;
  bfcMaxInUseMiB?: number;
  /** Weights llama.cpp / ggml placed on the GPU ("CUDA0 buffer size = 3946.35 MiB"). */
  ggmlGpuWeightsMiB?: number;
  /** The host-RAM buffer ggml (llama.cpp) failed to allocate, as the reply shows it ("128.00 GiB"). */
  ggmlBuffer?: string;
  ggmlCudaAskMiB?: number;
  ggmlCudaPurpose?: 'weights' | 'kv_cache' | 'compute';
  ggmlCtx?: number;
  ggmlCtxStated?: string;
  ggmlLayers?: string;
  prefillTokens?: number;
  prefillTokensHalf?: number;
  /** PaddlePaddle 1.x's legacy allocator: the request, its chunk cap, what it used and the card (MiB), the fraction
   *  flag, and the same as the reply shows them (levers/stack-levers.ts). */
  paddleAskMiB?: number;
  paddleMaxChunkMiB?: number;
  paddleUsedMiB?: number;
  paddleTotalMiB?: number;
  paddleFraction?: string;
  paddleAsk?: string;
  paddleMaxChunk?: string;
  paddleUsed?: string;
  paddleTotal?: string;
  /** TensorFlow's failed tensor: its size from shape and dtype, and a conv kernel's words when it is one. */
  tfTensorMiB?: number;
  tfTensor?: string;
  tfKernel?: string;
  /** A middle axis of that tensor of 100,000+ (a length read unbounded), as the reply shows it. */
  tfLongAxis?: string;
  /** A last axis of that tensor of 1,000,000+ (a word vocabulary, a class count, a flattened map), as the reply shows it. */
  tfWideAxis?: string;
  /** TensorFlow's BFC Stats block (Limit, InUse), read wherever the paste has it, and as the reply shows them. */
  tfLimitMiB?: number;
  tfInUseMiB?: number;
  tfLimit?: string;
  tfInUse?: string;
  /** vLLM: the served weights against the card, and the GPUs a tensor-parallel split needs. */
  servedWeights?: string;
  servedWeightsGpus?: number;
  /** vLLM's tensor_parallel_size as the log states it. */
  vllmTp?: number;
  /** The paste states more than one GPU for the job (visible devices, tensor parallel, the report's words). */
  multiGpuStated?: boolean;
  /** The paste names Ollama (which runs llama.cpp and keeps loaded models resident). */
  ollamaNamed?: boolean;
  /** TensorFlow's retracing warning as quoted ("5 out of the last 5 calls to <function …> triggered tf.function retracing"). */
  tfRetracing?: string;
  /** The dimension a TensorRT optimization profile varies between its min and max shapes. */
  trtProfileVaries?: 'batch' | 'resolution';
  /** The resolution the Stable Diffusion web UI's own memory check says fits ("448x448"). */
  webuiMaxRes?: string;
  /** A memory cap the stack's own settings put on it (levers/memory-cap.ts): a share of the card, a pool in MB, as stated. */
  memCapFraction?: number;
  memCapMiB?: number;
  memCap?: string;
  /** Keras models trained in one TF 1.x graph, from the failed op's scope suffix ('training_12/Adam/zeros': 13) (levers/keras-rebuilt.ts). */
  kerasGraphModels?: number;
  kerasOp?: string;
  /** Evidence that a TF/Keras model is built or loaded again and again in one process (levers/model-rebuilt.ts): a quote. */
  modelRebuilt?: string;
  /** A layer scope's unique-name suffix in the failed op ("fc1_24/kernel/Initializer": 25 copies) and whether it is an initializer. */
  kerasLayerCopies?: number;
  kerasLayerInit?: boolean;
  kerasLayerOp?: string;
  /** A TorchMetrics metric that keeps every update's preds and targets in list states on its device, or its frame (levers/metric-states.ts). */
  metricListState?: string;
  /** PEFT's trainable-parameter line where a LoRA run trains a tenth of the model or more (levers/lora-trainable.ts). */
  trainableWide?: string;
  /** The paste feeds token sequences (input_ids / attention_mask) and names no image input (levers/token-inputs.ts). */
  tokenInputs?: boolean;
  /** A second accelerator runtime named beside a PyTorch OOM (XLA, JAX, TensorFlow). */
  coRuntime?: string;
  /** TensorFlow 1.x's up-front reservation that failed ("failed to allocate 5.93G ... from device"), MiB and as shown. */
  tfUpfrontMiB?: number;
  tfUpfront?: string;
  /** The card's free and total MiB that XLA / TensorFlow printed after a failed cuDNN handle (levers/cudnn-handle.ts). */
  cudnnHandleFreeMiB?: number;
  cudnnHandleTotalMiB?: number;
  /** ... as shown: "7.43 GiB of 7.64 GiB" (free of total). */
  cudnnHandleMemory?: string;
  /**
   * A card newer than every CUDA the paste names for the build (levers/card-arch.ts): the card ("RTX 3080 (sm_86, Ampere)"),
   * the first CUDA that supports it ("11.1") and the newest CUDA named for the build ("PyTorch 1.3 (CUDA ≤ 10.1)").
   */
  cardArch?: string;
  cardNeedsCuda?: string;
  cardBuildCuda?: string;
  /** The paste prints an allocation failure's figures (a request, a free amount) anywhere (levers/driver-state.ts). */
  memoryFiguresPrinted?: boolean;
  /** A served model's KV cache for its context and what surrounds it (levers/kv-budget.ts), and as the reply shows them. */
  kvBudget?: KvBudget;
  kvCache?: string;
  kvContext?: number;
  kvContextNext?: number;
  kvWeights?: string;
  kvRoom?: string;
  /** Ray's memory monitor killed a task for the node's RAM, with its figures (src/diagnose/stack-figures.ts). */
  rayMonitor?: string;
}

/** A served model's KV cache for its context beside its weights and the card (read by levers/kv-budget.ts). */
export interface KvBudget {
  /** The context the cache is built for (tokens). */
  context: number;
  /** The cache's size in MiB: printed by the server, else computed. */
  kvMiB: number;
  /** MiB of cache per token of context, where the paste gives the model's shape (else from the printed size). */
  perTokenMiB: number;
  /** How the size was found, language-neutral ("131072 × 32 × (3072 + 3072) × 2 B", "KV self size = 4096.00 MiB"). */
  arithmetic: string;
  weightsMiB?: number;
  /** What the GPU may use (Metal's working set, the free memory the server reports). */
  budgetMiB?: number;
  /** Parallel sequences the context is split into, each with its own share of the cache (above 1 only). */
  parallel?: number;
  perSeq?: number;
}
