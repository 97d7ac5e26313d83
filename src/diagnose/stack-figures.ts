// Each non-PyTorch stack prints its own memory figures in its own fixed format; read them there, so a
// reply never says "the log gives no memory figures" when the stack gave them (issue 23 item 5):
//   TensorFlow / XLA's BFC allocator  "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.53GiB"
//                                     and its "Stats:" block (Limit / InUse / MaxInUse, bytes)
//   llama.cpp / ggml on CUDA          "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 25600.00 MiB on
//                                     device 0: cudaMalloc failed: out of memory", then what the buffer was for
//   text-generation-inference         "Not enough memory to handle 4096 prefill tokens"
//   vLLM                              "# GPU blocks: 0" under gpu_memory_utilization; v1's "(16.00 GiB KV cache is needed,
//                                     which is larger than the available KV cache memory (9.63 GiB)" and its estimate
//   ONNX Runtime's BFCArena           "Failed to allocate memory for requested buffer of size 4294967296" (bytes)
//   llama.cpp's compute graph / cache "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 2218786816",
//                                     "llama_kv_cache_init: failed to allocate buffer for kv cache"
// Patterns are anchored on each library's message text and bounded (untrusted input, linear).
import { toMiB } from './facts.js';
import { formatMiB } from './fixes/arithmetic.js';
import type { LogText } from './normalize.js';
import { fillMissing, newIncident, type Incident, type StackPart } from './incident/index.js';
import { readStackLevers } from './levers/stack-levers.js';
import { readMemoryCap } from './levers/memory-cap.js';
import { readKerasRebuilt } from './levers/keras-rebuilt.js';
import { readModelRebuilt } from './levers/model-rebuilt.js';
import { readLoraTrainable } from './levers/lora-trainable.js';
import { readTokenInputs } from './levers/token-inputs.js';
import { readKvBudget } from './levers/kv-budget.js';

/** What a llama.cpp CUDA buffer that did not fit was for, from the line that follows it. */
export type GgmlCudaPurpose = 'weights' | 'kv_cache' | 'compute';

// "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.53GiB (rounded to ...)"; the same text with
// "The caller indicates that this is not a failure" is a retry that succeeded, not an OOM.
const BFC_OOM = /Allocator \(([A-Za-z0-9_]{1,40})\) ran out of memory trying to allocate (\d{1,12}(?:\.\d{1,4})?)\s?([KMGT]i?B|B)\b/;
const BFC_NOT_FAILURE = /The caller indicates that this is not a failure/;
// TensorFlow logs them behind its own prefix ("2024-03-01 10:00:00.000000: I tensorflow/…/bfc_allocator.cc:1101] Limit: …").
const BFC_STAT = /^(?:[^\n\]]{0,200}\] )?\s{0,40}(Limit|InUse|MaxInUse):\s{1,40}(\d{1,16})\s*$/;
const GGML_CUDA = /ggml_backend_cuda_buffer_type_alloc_buffer: allocating (\d{1,9}(?:\.\d{1,3})?) MiB on device (\d{1,3}): cudaMalloc failed: out of memory/;
const GGML_VULKAN = /ggml_vulkan: Device memory allocation of size (\d{1,20}) failed/;
const GGML_KV = /kv_cache_init|KV cache|kv cache/;
const GGML_COMPUTE = /compute buffer/;
const GGML_WEIGHTS = /alloc_tensor_range|error loading model|unable to allocate (?:backend|CUDA\d{0,2}) buffer|load_tensors/;
const GGML_CTX = /\bn_ctx(?:_slot)?\s{0,12}=\s{0,4}(\d{1,8})\b/;
const GGML_LAYERS = /offloaded (\d{1,4})\/(\d{1,4}) layers to GPU/;
const TGI_PREFILL = /Not enough memory to handle (\d{1,9}) prefill tokens/;
const VLLM_BLOCKS = /# (?:GPU|cuda) blocks: (\d{1,9}),/;
const VLLM_UTIL = /gpu[_-]memory[_-]utilization[=\s]{1,3}(0?\.\d{1,4}|1(?:\.0{1,4})?)\b/;
// vLLM v1 (0.8+) sizes the cache for one request of max_model_len and, since 0.9, estimates the length that fits.
const VLLM_V1_KV =
  /max seq len \((\d{1,9})\),? \(([\d.]{1,10}) GiB KV cache is needed, which is larger than the available KV cache memory \((-?[\d.]{1,10}) GiB\)(?:\.\s{0,3}Based on the available memory,\s{0,3}the estimated maximum model length is (\d{1,9}))?/;
const ORT_ARENA = /Failed to allocate memory for requested buffer of size (\d{1,20})\b/;
const GGML_GALLOCR_CUDA = /ggml_gallocr_reserve_n: failed to allocate CUDA(\d{1,3}) buffer of size (\d{1,15})\b/;
// JAX through PJRT (jaxlib 0.4+): "RESOURCE_EXHAUSTED: Failed to allocate request for 6.27GiB (6727663616B) on device ordinal 0"
const PJRT_REQUEST = /RESOURCE[_ ]EXHAUSTED: Failed to allocate request for [\d.]{1,10} ?[KMGT]i?B \((\d{1,15})B\)/;
const GGML_KV_FAILED = /llama_kv_cache_init: failed to allocate buffer for kv cache/;
// llama.cpp's loader naming the GPU buffer of the weights it could not allocate (the cudaMalloc line not pasted).
const GGML_LOAD_GPU = /error loading model: unable to allocate (?:CUDA|ROCm|Vulkan|SYCL)(\d{1,3}) buffer/;
// The device a ggml failure was on, where its own line does not say: the last CUDA buffer placed before it
// ("llm_load_tensors:      CUDA0 buffer size =  4403.49 MiB") or the CUDA error's "current device: 0".
const GGML_DEVICE = /\bCUDA(\d{1,3})\s{0,12}(?:KV |compute )?buffer size\s{0,4}=|current device: (\d{1,3})\b/;
const MAX_LINE = 2000;

/** The figures of the stack that wrote the log (one pass over it; merged into each diagnosis by withStackFigures). */
export function readStackFigures(log: LogText): Incident {
  const incident: Incident = newIncident();
  let bfc: { name: string; tried: number; line: number } | undefined;
  const stats: Partial<Record<'Limit' | 'InUse' | 'MaxInUse', number>> = {};
  let ggml: { ask: number; device: number; line: number } | undefined;
  let gallocr: { ask: number; device: number } | undefined;
  let kvInitFailed = false;
  let loadDevice: number | undefined;
  let lastDevice: number | undefined;
  let ggmlCudaError = false;
  let ortAsk: number | undefined;
  let pjrtAsk: number | undefined;
  let vulkanAsk: number | undefined;
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (line.includes('ran out of memory trying to allocate') && !BFC_NOT_FAILURE.test(line)) {
      const m = BFC_OOM.exec(line);
      const mib = m ? toMiB(m[2], m[3]) : undefined;
      if (m && mib !== undefined) bfc = { name: m[1], tried: mib, line: l };
    } else if (line.includes('Use:') || line.includes('Limit:')) {
      const m = BFC_STAT.exec(line);
      if (m) stats[m[1] as 'Limit' | 'InUse' | 'MaxInUse'] = Number(m[2]) / 2 ** 20;
    } else if (line.includes('ggml_vulkan: Device memory allocation of size')) {
      // ggml's Vulkan backend: the size asked, in bytes, and no device index (levers/ggml-buffer.ts).
      const m = GGML_VULKAN.exec(line);
      if (m) vulkanAsk = Number(m[1]) / 2 ** 20;
    } else if (line.includes('cudaMalloc failed')) {
      const m = GGML_CUDA.exec(line);
      if (m) ggml = { ask: Number(m[1]), device: Number(m[2]), line: l };
    } else if (line.includes('prefill tokens')) {
      const m = TGI_PREFILL.exec(line);
      if (m) incident.stack.prefillTokens = Number(m[1]);
    } else if (line.includes(' blocks: ')) {
      const m = VLLM_BLOCKS.exec(line);
      if (m) incident.stack.vllmGpuBlocks = Number(m[1]);
    }
    if (line.includes('KV cache is needed')) {
      const m = VLLM_V1_KV.exec(line);
      if (m) vllmV1Kv(incident, m);
    } else if (line.includes('requested buffer of size')) {
      const m = ORT_ARENA.exec(line);
      if (m) ortAsk = Number(m[1]) / 2 ** 20;
    } else if (line.includes('ggml_gallocr_reserve_n')) {
      const m = GGML_GALLOCR_CUDA.exec(line);
      if (m) gallocr ??= { ask: Number(m[2]) / 2 ** 20, device: Number(m[1]) };
    } else if (line.includes('Failed to allocate request for')) {
      const m = PJRT_REQUEST.exec(line);
      if (m) pjrtAsk = Number(m[1]) / 2 ** 20;
    } else if (GGML_KV_FAILED.test(line)) kvInitFailed = true;
    else if (line.includes('unable to allocate')) {
      const m = GGML_LOAD_GPU.exec(line);
      if (m) loadDevice = Number(m[1]);
    }
    if (line.includes('ggml-cuda.cu')) ggmlCudaError = true;
    if (line.includes('buffer size') || line.includes('current device')) {
      const m = GGML_DEVICE.exec(line);
      if (m) lastDevice = Number(m[1] ?? m[2]);
    }
    if (line.includes('n_ctx')) {
      const m = GGML_CTX.exec(line);
      if (m) incident.stack.ggmlCtx = Number(m[1]);
    }
    if (line.includes('layers to GPU')) {
      const m = GGML_LAYERS.exec(line);
      if (m) incident.stack.ggmlLayers = `${m[1]}/${m[2]}`;
    }
    if (line.includes('memory') && line.includes('utilization')) {
      const m = VLLM_UTIL.exec(line);
      if (m) incident.stack.vllmUtil = Number(m[1]);
    }
  }
  if (bfc) {
    incident.stack.bfcAllocator = bfc.name;
    incident.figures.triedAllocMiB = round(bfc.tried);
    // The Stats block is in bytes: Limit is what this allocator may take of the device, InUse what it holds.
    if (stats.Limit !== undefined) incident.stack.bfcLimitMiB = round(stats.Limit);
    if (stats.InUse !== undefined) {
      incident.stack.bfcInUseMiB = round(stats.InUse);
      incident.figures.allocatedMiB = round(stats.InUse);
    }
    if (stats.MaxInUse !== undefined) incident.stack.bfcMaxInUseMiB = round(stats.MaxInUse);
  }
  if (ggml) {
    incident.figures.triedAllocMiB = ggml.ask;
    incident.figures.gpuIndex = ggml.device;
    incident.stack.ggmlCudaAskMiB = ggml.ask;
    const purpose = ggmlPurpose(log, ggml.line);
    if (purpose) incident.stack.ggmlCudaPurpose = purpose;
    incident.stack.ggmlCtxStated = incident.stack.ggmlCtx !== undefined ? `n_ctx = ${incident.stack.ggmlCtx}` : 'n_ctx = ?';
  }
  // llama.cpp without the cudaMalloc line: the graph allocator's CUDA buffer is the compute buffer, a failed
  // llama_kv_cache_init the cache; the first names the device and the size.
  if (!ggml && gallocr) {
    incident.figures.triedAllocMiB = round(gallocr.ask);
    incident.figures.gpuIndex = gallocr.device;
    incident.stack.ggmlCudaAskMiB = round(gallocr.ask);
    incident.stack.ggmlCudaPurpose = 'compute';
  } else if (!ggml && kvInitFailed) incident.stack.ggmlCudaPurpose = 'kv_cache';
  else if (!ggml && loadDevice !== undefined) {
    incident.stack.ggmlCudaPurpose = 'weights';
    incident.figures.gpuIndex = loadDevice;
  }
  if (gallocr || kvInitFailed) incident.stack.ggmlCtxStated ??= incident.stack.ggmlCtx !== undefined ? `n_ctx = ${incident.stack.ggmlCtx}` : 'n_ctx = ?';
  if (!ggml && !gallocr && (kvInitFailed || ggmlCudaError) && lastDevice !== undefined) incident.figures.gpuIndex = lastDevice;
  if (pjrtAsk !== undefined) incident.figures.triedAllocMiB ??= round(pjrtAsk);
  if (vulkanAsk !== undefined) incident.figures.triedAllocMiB ??= round(vulkanAsk);
  if (ortAsk !== undefined) {
    incident.figures.triedAllocMiB ??= round(ortAsk);
    // Past a PiB (a shape that overflowed) the bytes read better than GiB: "4.6e+18 bytes".
    incident.stack.ortRequest = ortAsk > 2 ** 30 ? `${(ortAsk * 2 ** 20).toExponential(1)} bytes` : formatMiB(ortAsk);
    incident.stack.ortAskMiB = ortAsk;
  }
  Object.assign(
    incident.stack,
    readStackLevers(log),
    readMemoryCap(log),
    readModelRebuilt(log),
    readKerasRebuilt(log),
    readTokenInputs(log),
    readLoraTrainable(log),
  );
  incident.stack.kvBudget = readKvBudget(log);
  if (incident.stack.prefillTokens !== undefined) incident.stack.prefillTokensHalf = Math.max(1, Math.floor(incident.stack.prefillTokens / 2));
  return incident;
}

/** Adds the stack's figures where the diagnosis's own message gave none (a PyTorch figure is never overridden). */
export function withStackFigures(incident: Incident, stack: Incident): void {
  fillMissing(incident, stack);
}

/** The line after the failed cudaMalloc says what the buffer was for (its own call site's message). */
function ggmlPurpose(log: LogText, at: number): GgmlCudaPurpose | undefined {
  for (let l = at + 1; l < log.lineCount && l <= at + 4; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (GGML_COMPUTE.test(line)) return 'compute';
    if (GGML_KV.test(line)) return 'kv_cache';
    if (GGML_WEIGHTS.test(line)) return 'weights';
  }
  return undefined;
}

const round = (mib: number) => Math.round(mib * 100) / 100;

/** vLLM v1's cache check: what one request of max_model_len needs, what is left, and the length that fits (vLLM's own
 *  estimate, else the same share of the length: the cache grows linearly with it). */
function vllmV1Kv(incident: Incident, m: RegExpExecArray): void {
  const maxLen = Number(m[1]);
  const needed = Number(m[2]);
  const available = Number(m[3]);
  incident.stack.maxModelLen = maxLen;
  incident.stack.vllmKvNeeded = `${m[2]} GiB`;
  incident.stack.vllmKvAvailable = `${m[3]} GiB`;
  const fits = m[4] !== undefined ? Number(m[4]) : needed > 0 && available > 0 ? Math.floor((maxLen * available) / needed / 256) * 256 : 0;
  if (fits > 0) incident.stack.kvCacheTokens = fits;
}

// Ray's memory monitor kills a task when the node's RAM (host memory, not the GPU's) passes its threshold:
// "Memory on the node (IP: …) where the task (… name=RayWorkerVllm.__init__, pid=308, memory used=11.15GB) was
// running was 12.49GB / 13.15GB (0.950003), which exceeds the memory usage threshold of 0.95." (Ray 2.x).
const RAY_NODE =
  /where the task \([^)\n]{0,300}?(?:name=([\w.<>-]{1,80}),[^)\n]{0,120}?)?memory used=(\d{1,6}(?:\.\d{1,3})?)GB\) was running was (\d{1,6}(?:\.\d{1,3})?)GB \/ (\d{1,6}(?:\.\d{1,3})?)GB \([\d.]{1,10}\), which exceeds the memory usage threshold of (\d(?:\.\d{1,6})?)/;
const RAY_KILLED = /killed due to memory pressure \(OOM\)|Task was killed due to the node running low on memory|Ray killed this worker|\bRayOutOfMemoryError\b/;
// Ray 1.x's monitor raised in the task instead of killing it: "RayOutOfMemoryError: More than 95% of the memory on node
// ip-10-0-0-5 is used (30.12 / 31.0 GB). The top 10 memory consumers are:" (memory_monitor.py).
const RAY_V1 =
  /RayOutOfMemoryError:?\s{0,3}More than (\d{1,3})% of the memory on node [^\s()]{1,120} is used \((\d{1,6}(?:\.\d{1,3})?) \/ (\d{1,6}(?:\.\d{1,3})?) GB\)/;

/** The Ray memory monitor's kill and its figures, as the reply shows them; undefined when Ray did not kill. */
export function readRayMonitor(log: LogText): Pick<StackPart, 'rayMonitor'> {
  let killed = false;
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (!line.includes('Ray') && !line.includes('memory')) continue;
    const m = line.includes('memory usage threshold') ? RAY_NODE.exec(line) : null;
    if (m) {
      const task = m[1] ? `${m[1]}, ` : '';
      return { rayMonitor: `${task}${m[2]} GB; node ${m[3]} / ${m[4]} GB ≥ ${m[5]}` };
    }
    const v1 = line.includes('RayOutOfMemoryError') ? RAY_V1.exec(line) : null;
    if (v1) return { rayMonitor: `node ${v1[2]} / ${v1[3]} GB > ${v1[1]}%` };
    if (RAY_KILLED.test(line)) killed = true;
  }
  return killed ? { rayMonitor: 'node RAM over RAY_memory_usage_threshold' } : {};
}
