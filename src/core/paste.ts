// Decides whether a chat message is a pasted log worth diagnosing, so ordinary chatter gets no reply.
// Cheap, bounded checks only: this runs on every message in every channel the bot is in.

const LOG_SIGNS = [
  /Traceback \(most recent call last\)/,
  /\b\w+Error:/,
  /out of memory/i,
  /\bKilled\b/,
  /NCCL (?:WARN|INFO|error)|ProcessGroupNCCL/,
  /NVIDIA-SMI|nvidia-smi|Driver Version:/,
  /^\s*Mem(?:ory)?:\s+\d/m,
  /CUDA error|CUBLAS_STATUS|CUDNN_STATUS|device-side assert/i,
  /bus error|shared memory|\/dev\/shm/i,
  /GPU_mem|\bmemory: \d{3,}/,
];

export function looksLikeLog(text: string): boolean {
  const head = text.length > 256 * 1024 ? text.slice(0, 128 * 1024) + text.slice(-128 * 1024) : text;
  const lines = head.split('\n', 4).length;
  const signs = LOG_SIGNS.filter((re) => re.test(head)).length;
  return signs >= 2 || (signs >= 1 && (lines >= 3 || head.length >= 160));
}
