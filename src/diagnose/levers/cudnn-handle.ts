// XLA's and TensorFlow's stream executor (cuda_dnn.cc CudnnSupport::Init) print the card's memory right after a cuDNN
// handle failed: "Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR" then "Memory usage: 7973961728 bytes
// free, 8198619136 bytes total." (cudaMemGetInfo at that moment). When most of the card is still free, the handle did
// not fail for memory: the cuDNN loaded does not work with this driver / CUDA / build (a version mismatch), and no
// memory setting helps. Fixed formats, bounded patterns (untrusted input, linear).
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';
import { formatMiB } from '../fixes/arithmetic.js';

const MAX_LINE = 2000;
const HANDLE_FAILED = /Could not create cudnn handle: CUDNN_STATUS_\w{3,30}/;
const MEMORY_USAGE = /Memory usage: (\d{1,16}) bytes free, (\d{1,16}) bytes total/;
/** At least this share of the card free when the handle failed: memory was not what it lacked. */
const FREE_SHARE = 0.5;

/** The free and total bytes XLA / TensorFlow printed after a failed cuDNN handle, in MiB (none: {}). */
export function readCudnnHandleMemory(log: LogText): Partial<StackPart> {
  let failed = false;
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (!failed) failed = line.includes('cudnn handle') && HANDLE_FAILED.test(line);
    if (!failed || !line.includes('Memory usage:')) continue;
    const m = MEMORY_USAGE.exec(line);
    if (!m || Number(m[2]) <= 0) continue;
    const free = Number(m[1]) / 2 ** 20;
    const total = Number(m[2]) / 2 ** 20;
    return { cudnnHandleFreeMiB: free, cudnnHandleTotalMiB: total, cudnnHandleMemory: `${formatMiB(free)} of ${formatMiB(total)}` };
  }
  return {};
}

/** The cuDNN handle failed with most of the card free. */
export const cudnnHandleCardFree = (i: Incident) =>
  i.stack.cudnnHandleFreeMiB !== undefined && i.stack.cudnnHandleFreeMiB >= FREE_SHARE * (i.stack.cudnnHandleTotalMiB ?? Infinity);

export const CUDNN_HANDLE_CONDITIONS = {
  cudnn_handle_card_free: ({ incident: i }: { incident: Incident }) => cudnnHandleCardFree(i),
  not_cudnn_handle_card_free: ({ incident: i }: { incident: Incident }) => !cudnnHandleCardFree(i),
};
