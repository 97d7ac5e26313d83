// The memory a stack was allowed, not the card, is what ran out (issue 23 items 4-5). Several stacks take a share of
// the card that their own settings fix, and an allocation fails against that share while the card has room:
//   TensorFlow 1.x       per_process_gpu_memory_fraction (GPUOptions), often set through a config key "..._FRACTION = 0.05"
//   PaddlePaddle         FLAGS_fraction_of_gpu_memory_to_use; its 2.x OOM text states the value in force
//                        ("FLAGS_fraction_of_gpu_memory_to_use is 0.50 now"); PaddleOCR's gpu_mem=<MB> sets that pool
//   JAX / XLA            XLA_PYTHON_CLIENT_MEM_FRACTION
//   vLLM                 --gpu-memory-utilization: weights, activations and the KV cache all come out of that share
// And one process can hold two allocators: torch_xla, JAX or TensorFlow started beside PyTorch preallocate most of the
// card for themselves (XLA: 75-90% by default), so a PyTorch OOM that shows little reserved by PyTorch and most of
// the card "outside" it is the other runtime of the same process, not another job.
// Patterns match each library's own setting names and message text; bounded (untrusted input, linear).
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';

const MAX_LINE = 2000;
// A fraction setting by its library's name, in code, a config dump or an env export: "per_process_gpu_memory_fraction=0.3",
// "__C.TEST.GPU_MEMORY_FRACTION = 0.05", "XLA_PYTHON_CLIENT_MEM_FRACTION=.5", "FLAGS_fraction_of_gpu_memory_to_use'] = "0.1"".
const FRACTION_SETTING =
  /\b(per_process_gpu_memory_fraction|[A-Z_]{0,20}GPU_MEMORY_FRACTION|XLA_PYTHON_CLIENT_MEM_FRACTION|FLAGS_fraction_of_gpu_memory_to_use)\b['"\]]{0,3}\s{0,3}[=:]\s{0,3}['"]?(0?\.\d{1,4}|1(?:\.0{1,4})?)\b/;
// Paddle 2.x's own OOM advice states the fraction in force: "2) FLAGS_fraction_of_gpu_memory_to_use is 0.50 now".
const PADDLE_FRACTION_NOW = /FLAGS_fraction_of_gpu_memory_to_use is (0?\.\d{1,4}|1(?:\.0{1,4})?) now/;
// PaddleOCR / PaddleX's pool in MB: PaddleOCR(gpu_mem=4000), --gpu_mem 4000.
const PADDLE_GPU_MEM = /\bgpu_mem\s{0,2}[=\s]\s{0,2}(\d{3,6})\b/;
// TensorFlow 1.x reserves its whole share as it creates the device: "failed to allocate 5.93G (6365773824 bytes) from
// device: CUDA_ERROR_OUT_OF_MEMORY" for (nearly) the card means that up-front grab failed, not a step's tensors.
const TF_UPFRONT = /failed to allocate [\d.]{1,10}[KMGT]? \((\d{1,15}) bytes\) from device: CUDA_ERROR_OUT_OF_MEMORY/;
// A second accelerator runtime in this process, as its package, module or the report names it.
const CO_RUNTIME = /\b(torch_xla|jaxlib|jax|XLA|xla|tensorflow)\b/;
const CO_RUNTIME_NAME: Record<string, string> = {
  torch_xla: 'torch_xla (XLA)',
  jaxlib: 'JAX (XLA)',
  jax: 'JAX (XLA)',
  xla: 'XLA',
  XLA: 'XLA',
  tensorflow: 'TensorFlow',
};

/** A share below this is a cap the user (or the tool) chose, well under what each stack takes by default. */
export const LOW_SHARE = 0.7;

/** The cap a stack's settings put on its memory, and a second runtime named beside a PyTorch OOM. */
export function readMemoryCap(log: LogText): Partial<StackPart> {
  const part: Partial<StackPart> = {};
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (/fraction/i.test(line)) {
      const now = PADDLE_FRACTION_NOW.exec(line);
      const set = now ?? FRACTION_SETTING.exec(line);
      if (now) part.memCapFraction = Number(now[1]);
      else if (set) part.memCapFraction ??= Number(set[2]);
      if (set) part.memCap = now ? `FLAGS_fraction_of_gpu_memory_to_use = ${now[1]}` : `${set[1]} = ${set[2]}`;
    }
    if (line.includes('from device: CUDA_ERROR_OUT_OF_MEMORY')) {
      const m = TF_UPFRONT.exec(line);
      if (m) part.tfUpfrontMiB = Math.max(part.tfUpfrontMiB ?? 0, Number(m[1]) / 2 ** 20);
    }
    if (line.includes('gpu_mem')) {
      const m = PADDLE_GPU_MEM.exec(line);
      if (m) part.memCapMiB = Number(m[1]);
    }
    if (part.coRuntime === undefined && /xla|jax|tensorflow/i.test(line)) {
      const m = CO_RUNTIME.exec(line);
      if (m) part.coRuntime = CO_RUNTIME_NAME[m[1]];
    }
  }
  if (part.tfUpfrontMiB !== undefined) part.tfUpfront = `${(part.tfUpfrontMiB / 1024).toFixed(2)} GiB`;
  if (part.memCapMiB !== undefined) part.memCap = part.memCap ? `gpu_mem=${part.memCapMiB} (MB), ${part.memCap}` : `gpu_mem=${part.memCapMiB} (MB)`;
  return part;
}

const cardMiB = (i: Incident) => i.figures.totalCapacityMiB ?? i.card.gpuMemoryMiB ?? i.card.statedGpuMemoryMiB ?? i.card.gpuModelMemoryMiB;
const failedRequestMiB = (i: Incident) => i.figures.triedAllocMiB ?? i.stack.tfTensorMiB;

/**
 * The stack ran under a cap it was given and a small request failed against it: the cap is the lever, not the batch.
 * Needs a stated share below LOW_SHARE (or a pool in MB below the card), a request that is small against the card
 * (under a tenth of it; under 1 GiB where the card is not stated), and no other process named on the card.
 */
export function stackCapFirst(i: Incident): boolean {
  if (i.run.tool === 'vllm' || (i.processes.otherProcesses?.length ?? 0) > 0) return false;
  const card = cardMiB(i);
  const shareLow = i.stack.memCapFraction !== undefined && i.stack.memCapFraction < LOW_SHARE;
  const poolLow = i.stack.memCapMiB !== undefined && (card === undefined || i.stack.memCapMiB < LOW_SHARE * card);
  if (!shareLow && !poolLow) return false;
  const ask = failedRequestMiB(i);
  if (ask === undefined) return false;
  return card !== undefined ? ask < 0.1 * card : ask < 1024;
}

/** vLLM was started with a share of the card well below its default, and its KV cache found no room in it. */
export function vllmShareLow(i: Incident): boolean {
  return i.run.tool === 'vllm' && i.stack.vllmUtil !== undefined && i.stack.vllmUtil < LOW_SHARE && (i.processes.otherProcesses?.length ?? 0) === 0;
}

/**
 * PyTorch's allocator holds a small part of the card, almost none is free, and the paste names a second runtime that
 * preallocates (XLA, JAX, TensorFlow): the memory "outside" PyTorch is that runtime's in this process. Not when the
 * message lists other processes on the card.
 */
export function coRuntimePreallocates(i: Incident): boolean {
  const total = i.figures.totalCapacityMiB;
  const f = i.figures;
  // PyTorch's own figures only (reserved, this process, reserved-but-unallocated): the OOM is PyTorch's, so a TF / JAX
  // named beside it is a second runtime; another stack's "allocated" (Paddle's) says nothing of that.
  const torchAllocated = f.allocatedMiB !== undefined && f.reservedUnallocatedMiB !== undefined ? f.allocatedMiB + f.reservedUnallocatedMiB : undefined;
  const mine = f.reservedMiB ?? f.thisProcessMiB ?? torchAllocated;
  const free = i.figures.freeMiB;
  if (i.stack.coRuntime === undefined || total === undefined || mine === undefined || free === undefined) return false;
  if ((i.processes.otherProcesses?.length ?? 0) > 0) return false;
  return mine < 0.25 * total && total - free - mine > 0.5 * total;
}

/** TensorFlow's up-front reservation of (nearly) the whole card failed: its share, not a step, is the lever. */
export function tfUpfrontFailed(i: Incident): boolean {
  const card = cardMiB(i);
  const ask = i.stack.tfUpfrontMiB;
  if (ask === undefined) return false;
  // TF 1.x reserves nearly all that was FREE as it started (levers/tf-start-free.ts): its first ask is measured against
  // that too, when no other process held most of the card (then the holder comes first).
  const free = i.stack.tfStartHeld === undefined ? i.stack.tfStartFreeMiB : undefined;
  return (card !== undefined && ask >= 0.8 * card) || (free !== undefined && ask >= 0.8 * free);
}

export const MEMORY_CAP_CONDITIONS = {
  stack_cap_first: ({ incident: i }: { incident: Incident }) => stackCapFirst(i),
  vllm_share_low: ({ incident: i }: { incident: Incident }) => vllmShareLow(i),
  co_runtime_preallocates: ({ incident: i }: { incident: Incident }) => coRuntimePreallocates(i),
  tf_upfront_failed: ({ incident: i }: { incident: Incident }) => tfUpfrontFailed(i),
};
