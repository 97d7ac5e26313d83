// What llama.cpp's failed GPU buffer was for (stack-figures.ts reads it from the line after the failed allocation):
// the offloaded weights, the KV cache or the compute buffer, each with its own lever. ggml's Vulkan backend names no
// device index in its failure ("ggml_vulkan: Device memory allocation of size N failed."), so a reply that names the
// GPU by its index does so only where the paste gives one.
import type { Incident } from '../incident/index.js';
import { kvContextFirst } from './kv-budget.js';

export const GGML_BUFFER_CONDITIONS = {
  ggml_cuda_weights: ({ incident }: { incident: Incident }) => incident.stack.ggmlCudaPurpose === 'weights',
  ggml_cuda_kv: ({ incident }: { incident: Incident }) => incident.stack.ggmlCudaPurpose === 'kv_cache',
  ggml_cuda_compute: ({ incident }: { incident: Incident }) => incident.stack.ggmlCudaPurpose === 'compute',
  // A served model's KV cache for a large context is what the GPU cannot hold (levers/kv-budget.ts): the context first;
  // with the weights and the GPU's room both printed, the reply sets the three side by side.
  kv_context_first: ({ incident }: { incident: Incident }) => kvContextFirst(incident),
  kv_room_known: ({ incident }: { incident: Incident }) => incident.stack.kvWeights !== undefined && incident.stack.kvRoom !== undefined,
  kv_room_unknown: ({ incident }: { incident: Incident }) => incident.stack.kvWeights === undefined || incident.stack.kvRoom === undefined,
  gpu_index_known: ({ incident }: { incident: Incident }) => incident.figures.gpuIndex !== undefined,
};
