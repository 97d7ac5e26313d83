// Redacts a pasted log before the bot keeps it (feedback.keep_logs): tokens, keys and passwords (the shapes
// of src/feedback/secret-rules.ts: gitleaks' and detect-secrets' rule sets, plus keyword = value, URL
// credentials and key blocks), home directories (the user name in them), e-mail addresses and IP addresses
// become placeholders, and only the last MAX_KEPT_BYTES are kept (the last error is what a rule needs).
// The text is untrusted and any size: every pattern runs in re2 (linear time), after the cut.
import RE2 from 're2';
import { SECRET_RULES, type SecretRule } from './secret-rules.js';

/** The most of a log that is kept by default: its last 256 KiB, from a line start (config feedback.max_log_kib). */
export const MAX_KEPT_BYTES = 256 * 1024;

/**
 * Values of a secret-named key that are no secret: booleans and nothing, a variable or template reference, a
 * mask, one of our placeholders, a tokenizer's special token (`pad_token='<pad>'`, `eos_token: </s>`).
 */
const NOT_A_SECRET = new RE2(
  String.raw`^["']?(?:true|false|none|null|nil|yes|no|on|off|\*+|x{3,}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{[^}]{0,100}\}\}|%\(?[A-Za-z_]{1,40}\)?s?|<[^<>]{0,40}>|</?s>|\[[A-Z]{2,10}\])["']?$`,
  'i',
);
/** Keys of a tokenizer's special tokens: `pad_token`, `eos_token`… name a token of the vocabulary, not a credential. */
const SPECIAL_TOKEN_KEY = new RE2(String.raw`(?:^|[_.-])(?:pad|eos|bos|unk|mask|cls|sep|start|end|special|additional_special|im_start|im_end)_token$`, 'i');

type Replacer = (match: string, ...groups: (string | number)[]) => string;
interface CompiledRule {
  id: string;
  re: RE2;
  to: string | Replacer;
}

/** An identifier divided or multiplied by numbers (`token = image_resolution/4/14/14`) is arithmetic in prose, not a credential. */
const FORMULA = new RE2(String.raw`^[A-Za-z_][A-Za-z0-9_]{0,60}(?:[/*]\d{1,6}){1,8}$`);

/**
 * A value that is a lower-case name made of words, one of them a secret's own word (`token=hf_token`,
 * `api_key=args.api_key`, `hf_token = 'your_huggingface_access_token'`), names the variable or placeholder that holds
 * the secret, not the secret: generated tokens and keys carry no such word, and most carry capitals or long digit runs.
 */
const IDENTIFIER_VALUE = new RE2(String.raw`^["']?[a-z][a-z0-9]{0,30}(?:[_.][a-z0-9]{1,30}){1,8}["']?$`);
const SECRET_WORD_PART = new RE2(String.raw`(?:^|[_.'"])(?:token|key|secret|password|passwd|pwd|credentials?)(?:$|[_.'"])`);
const namesTheSecret = (v: string) => IDENTIFIER_VALUE.test(v) && SECRET_WORD_PART.test(v);

/** A small number (`max_token=40`) is a setting, unless the key names a password (`pin`-like passwords are numbers). */
const SMALL_NUMBER = new RE2(String.raw`^["']?\d{1,6}(?:\.\d{1,6})?["']?$`);
const PASSWORD_KEY = new RE2(String.raw`pass|pwd|secret|credential|auth`, 'i');

/** A character of a file or key name (the key's own prefix runs over these). */
const NAME_CHAR = /^[A-Za-z0-9_.-]$/;

/** A keyword rule's replacement: the key and separator kept, the value replaced unless it is no secret. */
function keywordReplacer(to: string): Replacer {
  return (match, key, sep, value, offset, whole) => {
    const k = String(key);
    const v = String(value);
    if (NOT_A_SECRET.test(v) || SPECIAL_TOKEN_KEY.test(k) || FORMULA.test(v) || namesTheSecret(v) || (SMALL_NUMBER.test(v) && !PASSWORD_KEY.test(k)))
      return match;
    // A name that is the last part of a path is a file's name, not a key (`-v /etc/passwd:/etc/passwd:ro`, `~/.token:`).
    if (typeof offset === 'number' && typeof whole === 'string') {
      let start = offset;
      while (start > 0 && start > offset - 64 && NAME_CHAR.test(whole[start - 1])) start--;
      if (start > 0 && (whole[start - 1] === '/' || whole[start - 1] === '\\')) return match;
    }
    // A quoted value keeps its quotes (the line stays valid JSON or YAML).
    const quote = v[0] === '"' || v[0] === "'" ? v[0] : '';
    return to.replace('$1', k).replace('$2', String(sep) + quote) + quote;
  };
}

export function compileRule(r: SecretRule): CompiledRule {
  return { id: r.id, re: new RE2(r.pattern, `g${r.flags ?? ''}`), to: r.keyword ? keywordReplacer(r.to) : r.to };
}

/** A rule whose whole match becomes a fixed text (no group kept, no flag): runs of these can share a pass. */
const isFixed = (r: SecretRule) => !r.keyword && !r.flags && !r.to.includes('$');

/**
 * The rules in their order, each run of consecutive fixed-text rules as one RE2 pass over their union (the
 * rule that matched is found again on the match alone): a log is scanned about 20 times instead of 90.
 */
export function compileRules(rules: SecretRule[]): CompiledRule[] {
  const out: CompiledRule[] = [];
  for (let i = 0; i < rules.length;) {
    let j = i;
    while (j < rules.length && isFixed(rules[j])) j++;
    if (j === i) {
      out.push(compileRule(rules[i++]));
      continue;
    }
    const run = rules.slice(i, j);
    const whole = run.map((r) => ({ re: new RE2(`^(?:${r.pattern})$`), to: r.to }));
    // Every match is one alternative's whole match; a miss here would be a bug, and fails closed.
    const to = (match: string) => whole.find((w) => w.re.test(match))?.to ?? '<redacted>';
    out.push({ id: run.map((r) => r.id).join('+'), re: new RE2(run.map((r) => `(?:${r.pattern})`).join('|'), 'g'), to });
    i = j;
  }
  return out;
}

const SECRETS: CompiledRule[] = compileRules(SECRET_RULES);

/** Personal data: home directories (the user name is often the login on the GPU host), e-mail and IP addresses. */
const PERSONAL: CompiledRule[] = (
  [
    ['home', /\/home\/[^/\s"':]{1,100}/g, '/home/<user>'],
    ['macos-home', /\/Users\/[^/\s"':]{1,100}/g, '/Users/<user>'],
    ['windows-home', /\b([A-Za-z]):\\{1,2}Users\\{1,2}[^\\\s"':]{1,100}/gi, '$1:\\Users\\<user>'],
    // E-mail addresses, then IP addresses (IPv4; IPv6 written out in full or ::-compressed, as NCCL prints them).
    ['email', /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b/g, '<email>'],
    ['ipv4', /\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b/g, '<ip>'],
    ['ipv6', /\b(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}\b/g, '<ip>'],
    ['ipv6-compressed', /\b(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4}\b/g, '<ip>'],
  ] as [string, RegExp, string][]
).map(([id, re, to]) => ({ id, re: new RE2(re), to }));

function apply(text: string, rules: CompiledRule[]): string {
  let out = text;
  // RE2's replace takes a string or a function, as String.prototype.replace does.
  for (const r of rules) out = out.replace(r.re, r.to as string);
  return out;
}

/** Tokens, keys and passwords replaced (nothing else: paths and addresses stay). */
export function redactSecrets(text: string): string {
  return apply(text, SECRETS);
}

/** The last `maxBytes` of the text (UTF-8), starting at a line so no token is cut in half. */
export function lastBytes(text: string, maxBytes = MAX_KEPT_BYTES): { text: string; cut: boolean } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, cut: false };
  const bytes = Buffer.from(text);
  const s = bytes.subarray(bytes.length - maxBytes).toString();
  // A split character or half a line goes: the text starts after the first newline (or its first character).
  return { text: s.slice(Math.max(s.indexOf('\n'), 0) + 1), cut: true };
}

/** The log as it may be kept: cut to its last `maxBytes`, then every secret, path and address replaced. */
export function redactLog(text: string, maxBytes = MAX_KEPT_BYTES): string {
  const { text: kept, cut } = lastBytes(text, maxBytes);
  const out = apply(apply(kept, SECRETS), PERSONAL);
  return cut ? `[... earlier lines not kept; the last ${Math.round(maxBytes / 1024)} KiB follow]\n${out}` : out;
}

/**
 * A run of 32 or more letters and digits (both) with no separator: the shape of a key or token body that no
 * rule names (a line cut out of a key block, a bare secret). Only quotes taken out of a kept log (the weekly
 * list's excerpt) lose these: the kept log itself keeps them, as hashes and ids in a log look alike.
 */
const BARE_SECRET = new RE2(String.raw`[A-Za-z0-9+/=]{32,}`, 'g');
export function scrubBareSecrets(line: string): string {
  return line.replace(BARE_SECRET, (run: string) => (/[0-9]/.test(run) && /[A-Za-z]/.test(run) ? '<redacted>' : run));
}
