// Redacts a pasted log before the bot keeps it (feedback.keep_logs): tokens and keys, passwords in
// `key=value`, home directories (the user name in them), e-mail addresses and IP addresses become
// placeholders, and only the last MAX_KEPT_BYTES are kept (the last error is what a rule needs).
// The text is untrusted and any size: every pattern runs in re2 (linear time), after the cut.
import RE2 from 're2';

/** The most of a log that is kept: its last 256 KiB, from a line start. */
export const MAX_KEPT_BYTES = 256 * 1024;

/** [pattern, replacement]; applied in order, so keys go before the generic key=value and e-mail rules. */
const RULES: [RE2, string][] = (
  [
    // PEM private keys, whole blocks.
    [/-----BEGIN[A-Z ]{0,40}PRIVATE KEY-----[\s\S]*?-----END[A-Z ]{0,40}PRIVATE KEY-----/g, '<private key>'],
    // Credentials in URLs: scheme://user:password@host
    [/([A-Za-z][A-Za-z0-9+.-]{0,20}:\/\/)[^\s/:@]{1,200}:[^\s/@]{1,200}@/g, '$1<credentials>@'],
    // Slack (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xapp-), GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_),
    // Hugging Face (hf_), OpenAI-style (sk-), Weights & Biases v1 keys, AWS access key ids, JWTs.
    [/\bxox[abposr]-[A-Za-z0-9-]{8,}/g, '<slack token>'],
    [/\bxapp-[A-Za-z0-9-]{8,}/g, '<slack token>'],
    [/\bgh[pousr]_[A-Za-z0-9]{20,}/g, '<github token>'],
    [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, '<github token>'],
    [/\bhf_[A-Za-z0-9]{20,}/g, '<hf token>'],
    [/\bsk-[A-Za-z0-9_-]{20,}/g, '<api key>'],
    [/\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b/g, '<aws key id>'],
    [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, '<jwt>'],
    // Authorization headers (after the named tokens, which keep their kind).
    [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 <token>'],
    // key=value / key: value where the key names a secret (password=..., HF_TOKEN=..., "api_key": "...").
    // The key ends with the word, so `max_new_tokens=512` or `tokenizer=` stay as they are.
    [
      /\b([A-Za-z0-9_.-]{0,40}(?:password|passwd|pwd|secret(?:[_-]?key)?|token|api[_-]?key|access[_-]?key(?:[_-]?id)?|private[_-]?key|credentials?))(["']?\s{0,3}[=:]\s{0,3}["']?)[^\s"',;&<>()[\]{}]{1,500}/gi,
      '$1$2<redacted>',
    ],
    // Home directories: the user name is personal (and often the login on the GPU host).
    [/\/home\/[^/\s"':]{1,100}/g, '/home/<user>'],
    [/\/Users\/[^/\s"':]{1,100}/g, '/Users/<user>'],
    [/\b([A-Za-z]):\\{1,2}Users\\{1,2}[^\\\s"':]{1,100}/gi, '$1:\\Users\\<user>'],
    // E-mail addresses, then IP addresses (IPv4; IPv6 written out in full or ::-compressed, as NCCL prints them).
    [/[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b/g, '<email>'],
    [/\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b/g, '<ip>'],
    [/\b(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}\b/g, '<ip>'],
    [/\b(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4}\b/g, '<ip>'],
  ] as [RegExp, string][]
).map(([re, to]) => [new RE2(re), to]);

/** The last `maxBytes` of the text (UTF-8), starting at a line so no token is cut in half. */
export function lastBytes(text: string, maxBytes = MAX_KEPT_BYTES): { text: string; cut: boolean } {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return { text, cut: false };
  const tail = Buffer.from(text.slice(-maxBytes), 'utf8');
  let s = tail.subarray(Math.max(0, tail.length - maxBytes)).toString('utf8');
  const nl = s.indexOf('\n');
  s = nl >= 0 ? s.slice(nl + 1) : s.slice(1); // a split character or half a line goes
  return { text: s, cut: true };
}

/** The log as it may be kept: cut to its last `maxBytes`, then every secret, path and address replaced. */
export function redactLog(text: string, maxBytes = MAX_KEPT_BYTES): string {
  const { text: kept, cut } = lastBytes(text, maxBytes);
  let out = kept;
  for (const [re, to] of RULES) out = out.replace(re, to);
  return cut ? `[... earlier lines not kept; the last ${Math.round(maxBytes / 1024)} KiB follow]\n${out}` : out;
}
