// Decides whether a chat message is a pasted log worth diagnosing, so ordinary chatter gets no reply.
// Cheap, bounded checks only: this runs on every message in every channel the bot is in, on text any
// user controls, so every pattern runs in re2 (linear time). A backtracking regex here froze the bot:
// /^\s*Mem:/m restarts at every line start of a run of blank lines (64 KB of them took 3.6 s).
import RE2 from 're2';

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
].map((re) => new RE2(re));

/** The most of a message the check reads: its first and last 128 KB. */
const HEAD_CHARS = 128 * 1024;

export function looksLikeLog(text: string): boolean {
  const head = text.length > 2 * HEAD_CHARS ? text.slice(0, HEAD_CHARS) + text.slice(-HEAD_CHARS) : text;
  const lines = head.split('\n', 4).length;
  const utf8 = Buffer.from(head, 'utf8'); // converted once, not once per pattern
  const signs = LOG_SIGNS.filter((re) => re.test(utf8)).length;
  return signs >= 2 || (signs >= 1 && (lines >= 3 || head.length >= 160));
}
