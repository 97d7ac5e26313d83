// Who holds the GPU memory when an allocation fails, decided from the OOM message's own numbers before
// any fix is chosen: the fix follows the holder (issue 12). Each verdict carries the arithmetic that
// decided it, so the reply can show it and a reader can check it.
//   other_processes  the device is full and other processes hold a large share of it
//   allocator_cache  reserved − allocated ≥ the request: the bytes exist, not in one block
//   not_capacity     the device reports free ≥ the request: something else limits (device, limit, driver)
//   weights          the model's weights alone (parameters × bytes per dtype) nearly fill the card, or
//                    the allocation failed while the model was being loaded or moved to the GPU
//   optimizer_state  the allocation failed in the optimizer's step (Adam's state is 2 × fp32 parameters)
//   activations      this process holds the card: batch × input size is the lever
import type { Facts } from './facts.js';
import { formatMiB } from './fixes/arithmetic.js';

export type Holder = 'allocator_cache' | 'not_capacity' | 'other_processes' | 'weights' | 'optimizer_state' | 'activations';

export interface HolderVerdict {
  holder: Holder;
  /** The arithmetic behind the verdict, in words and numbers from the log. */
  why: string;
}

/** Bytes per parameter for the dtypes a log can state. */
const BYTES_PER_PARAM: Record<string, number> = { fp32: 4, fp16: 2, bf16: 2, int8: 1, int4: 0.5 };

/** GiB of weights for a model of `paramsB` billion parameters in `dtype` (fp16 when the log does not say). */
export function weightsMiB(paramsB: number, dtype: string | undefined): number {
  return (paramsB * 1e9 * (BYTES_PER_PARAM[dtype ?? 'fp16'] ?? 2)) / 2 ** 20;
}

/** Memory this process's allocator holds but has not handed out. */
export function idleCacheMiB(f: Facts): number | undefined {
  if (f.reservedUnallocatedMiB !== undefined) return f.reservedUnallocatedMiB;
  if (f.reservedMiB !== undefined && f.allocatedMiB !== undefined) return Math.max(0, f.reservedMiB - f.allocatedMiB);
  return undefined;
}

/** What this process holds on the device: its own figure, else what its allocator reserved. */
function thisProcessHolds(f: Facts): number | undefined {
  return f.thisProcessMiB ?? f.reservedMiB ?? (f.allocatedMiB !== undefined ? f.allocatedMiB + (f.reservedUnallocatedMiB ?? 0) : undefined);
}

const MiB = formatMiB;
/** Weights that take this share of the card leave no room for anything else: they are the holder. */
const WEIGHTS_FILL = 0.85;

export function whoHoldsMemory(f: Facts): HolderVerdict | undefined {
  const tried = f.triedAllocMiB;
  const total = f.totalCapacityMiB ?? f.gpuMemoryMiB ?? f.statedGpuMemoryMiB;
  const idle = idleCacheMiB(f);
  // The model's weights as the log sizes them (parameters × bytes per dtype), when it names a size.
  const weights = f.paramsB !== undefined ? weightsMiB(f.paramsB, f.dtype) : undefined;
  const mine = thisProcessHolds(f);
  const others = (f.otherProcesses ?? []).reduce((s, p) => s + p.memoryMiB, 0);
  // Before this process allocated anything, part of the card was already taken: that is someone else's.
  if (f.startupFreeMiB !== undefined && total !== undefined && total - f.startupFreeMiB >= 1024) {
    return {
      holder: 'other_processes',
      why: `only ${MiB(f.startupFreeMiB)} of ${MiB(total)} was free when the process started: about ${MiB(total - f.startupFreeMiB)} is held by other processes`,
    };
  }
  // Processes the message names (this one excluded) holding a material share: freeing them is the lever.
  if (total !== undefined && others >= Math.max(1024, 0.1 * total) && (tried === undefined || others >= tried)) {
    return {
      holder: 'other_processes',
      why: `other processes hold ${MiB(others)} of ${MiB(total)} (${f.otherProcesses!.map((p) => `pid ${p.pid}: ${MiB(p.memoryMiB)}`).join(', ')})${mine !== undefined ? `, this process ${MiB(mine)}` : ''}`,
    };
  }
  if (total !== undefined && mine !== undefined) {
    const elsewhere = Math.max(others, total - (f.freeMiB ?? 0) - mine);
    if (f.freeMiB !== undefined || others > 0) {
      // Others hold over a quarter of the card, and this process little of it or they nearly a third:
      // freeing theirs would let this job fit, whatever its own layout.
      if (elsewhere > Math.max(2048, 0.25 * total) && (mine < 0.5 * total || elsewhere >= 0.3 * total)) {
        const whom = f.otherProcesses?.length ? ` (${f.otherProcesses.map((p) => `pid ${p.pid}: ${MiB(p.memoryMiB)}`).join(', ')})` : '';
        return { holder: 'other_processes', why: `of ${MiB(total)}, this process holds ${MiB(mine)} and about ${MiB(elsewhere)} is held outside it${whom}` };
      }
    }
  }
  // CUDA's own out-of-memory (outside PyTorch's allocator) while the model is first moved to the GPU: the
  // context or the first parameters could not be allocated, so the card was full before this job began,
  // unless the weights named in the log are themselves too big for it.
  const weightsTooBig = weights !== undefined && total !== undefined && weights >= WEIGHTS_FILL * total;
  if (f.runtimeOom && f.oomPhase === 'load' && !weightsTooBig && f.triedAllocMiB === undefined) {
    return {
      holder: 'other_processes',
      why: `CUDA itself ran out of memory (not PyTorch's allocator, which prints its figures) while the model was first moved to the GPU: the CUDA context or the first parameters could not be allocated, so the card was already full: other processes, or the wrong GPU`,
    };
  }
  // A request of under a MiB with nothing free, and no figure for this process: the card had no room at all.
  if (tried !== undefined && tried < 1 && f.freeMiB !== undefined && f.freeMiB < 1 && f.allocatedMiB === undefined && f.reservedMiB === undefined) {
    return {
      holder: 'other_processes',
      why: `a ${MiB(tried)} request failed with ${MiB(f.freeMiB)} free and nothing allocated by this process in the message: the card was full before this job began`,
    };
  }
  // The idle cache must cover the request and be a material share of the card (5%; 10% of what this
  // process reserved when the capacity is not printed), or the device must have the bytes too: a few
  // MiB of slack on a full card is a full card.
  const reserved = f.reservedMiB ?? (f.allocatedMiB !== undefined && idle !== undefined ? f.allocatedMiB + idle : undefined);
  const material = total !== undefined ? 0.05 * total : reserved !== undefined ? 0.1 * reserved : Infinity;
  // Both the cache and the device have the bytes: the allocator's block layout is what failed.
  const deviceHasIt = tried !== undefined && f.freeMiB !== undefined && f.freeMiB >= tried;
  // A cache of a GiB or more that is many times the request is fragmentation whatever the card's size.
  const largeCache = idle !== undefined && tried !== undefined && idle >= 1024 && idle >= 8 * tried;
  if (tried !== undefined && idle !== undefined && idle >= tried && (idle >= material || deviceHasIt || largeCache)) {
    const how =
      f.reservedUnallocatedMiB !== undefined
        ? `${MiB(idle)} is reserved by PyTorch but unallocated`
        : `reserved ${MiB(f.reservedMiB!)} − allocated ${MiB(f.allocatedMiB!)} = ${MiB(idle)} idle in PyTorch's cache`;
    return { holder: 'allocator_cache', why: `${how} ≥ the ${MiB(tried)} request: the memory exists but not in one block` };
  }
  // Clearly more free than asked: equal printed figures ("1.50 GiB free", "Tried to allocate 1.50 GiB")
  // are rounding, not spare memory.
  if (tried !== undefined && f.freeMiB !== undefined && f.freeMiB >= 1.25 * tried && f.freeMiB - tried >= 64) {
    return { holder: 'not_capacity', why: `the device reports ${MiB(f.freeMiB)} free ≥ the ${MiB(tried)} request: this is not the card being full` };
  }
  // XLA sized the whole program: arguments (parameters and inputs) that alone nearly fill the device are
  // the weights; otherwise the program's temporaries (activations) are what does not fit.
  if (f.xlaUsedMiB !== undefined && total !== undefined && f.xlaUsedMiB > total) {
    const args = f.xlaArgumentsMiB;
    if (args !== undefined && args >= 0.8 * total) {
      return {
        holder: 'weights',
        why: `XLA counts ${MiB(args)} of arguments (the parameters and inputs) against ${MiB(total)} of device memory, before any temporary: the weights alone do not fit one device`,
      };
    }
    if (f.xlaProgramMiB !== undefined && f.xlaProgramMiB >= (args ?? 0)) {
      const besides = args ? ` besides ${MiB(args)} of arguments` : '';
      return {
        holder: 'activations',
        why: `XLA's program needs ${MiB(f.xlaProgramMiB)} of temporaries (activations)${besides}, ${MiB(f.xlaUsedMiB)} in all on a ${MiB(total)} device`,
      };
    }
  }
  if (f.oomPhase === 'load') {
    const size = f.paramsB !== undefined ? ` (${f.paramsB}B parameters ≈ ${MiB(weightsMiB(f.paramsB, f.dtype))} in ${f.dtype ?? 'fp16'})` : '';
    return {
      holder: 'weights',
      why: `the allocation failed while the model was being loaded or moved to the GPU, before any batch ran${size}${total !== undefined ? `, on a ${MiB(total)} card` : ''}`,
    };
  }
  if (f.oomPhase === 'optimizer') {
    return {
      holder: 'optimizer_state',
      why: `the allocation failed in the optimizer's step, which creates its state (Adam: two fp32 tensors per parameter) on first use${total !== undefined ? `, on a ${MiB(total)} card` : ''}`,
    };
  }
  if ((f.oomPhase === 'backward' || f.oomPhase === 'forward') && (mine === undefined || total === undefined)) {
    return {
      holder: 'activations',
      why: `the allocation failed in the ${f.oomPhase} pass, which holds the batch's activations${f.oomPhase === 'backward' ? ' and their gradients' : ''} (the message gives no memory figures)`,
    };
  }
  if (f.paramsB !== undefined && weights !== undefined && total !== undefined) {
    if (weights >= WEIGHTS_FILL * total) {
      const dtype = f.dtype ?? 'fp16 (assumed: the log does not say)';
      return {
        holder: 'weights',
        why: `${f.paramsB}B parameters × ${BYTES_PER_PARAM[f.dtype ?? 'fp16'] ?? 2} bytes (${dtype}) ≈ ${MiB(weights)} of weights against ${MiB(total)} on the card`,
      };
    }
  }
  // Full fine-tuning with Adam in mixed precision keeps ~16 bytes per parameter (fp16 weights and
  // gradients, fp32 master weights and two moments); LoRA/PEFT trains a tiny fraction of them.
  if (f.paramsB !== undefined && total !== undefined && f.training && !f.adapterTraining) {
    const state = (f.paramsB * 1e9 * 16) / 2 ** 20;
    if (state >= total) {
      return {
        holder: 'optimizer_state',
        why: `full fine-tuning of ${f.paramsB}B parameters with Adam keeps about 16 bytes per parameter (weights, gradients, fp32 master copy and two moments) ≈ ${MiB(state)}, more than the ${MiB(total)} card`,
      };
    }
  }
  if (mine !== undefined && total !== undefined) {
    return {
      holder: 'activations',
      why: `this process holds ${MiB(mine)} of ${MiB(total)}${tried !== undefined ? ` and needed ${MiB(tried)} more` : ''}: its own tensors fill the card`,
    };
  }
  if (tried !== undefined && f.freeMiB !== undefined) {
    return { holder: 'activations', why: `${MiB(f.freeMiB)} free < the ${MiB(tried)} request` };
  }
  // TensorFlow named the tensor: 3+ dimensions led by the batch are an activation of this step.
  if (f.batchFromShape !== undefined) {
    return {
      holder: 'activations',
      why: `TensorFlow could not allocate the activation tensor ${f.batchFromShape}; its leading dimension ${f.batch} is the batch, so the step's activations fill the card`,
    };
  }
  return undefined;
}
