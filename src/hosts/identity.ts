// Identity (private key) files, checked before ssh2 sees them: ssh2's connect throws on a key it
// cannot parse, and a throw there once ended the whole bot. Messages name the file and the problem,
// never anything read from it.
import ssh2 from 'ssh2';
import { message, type Message } from '../core/message.js';
import { readFileSync, statSync } from 'node:fs';

// ssh2 is CommonJS: Node's ESM loader does not see `utils` as a named export.
const { utils } = ssh2;

/** Larger than any OpenSSH private key (an RSA 16384 key is ~12 KB): not a key, not read whole. */
const MAX_KEY_BYTES = 64 * 1024;

export type IdentityCheck = { ok: true; encrypted: false; key: Buffer } | { ok: true; encrypted: true } | { ok: false; problem: Message };

/** Reads and parses one identity file. `encrypted` keys are usable only through an ssh agent. */
export function checkIdentityFile(file: string): IdentityCheck {
  let data: Buffer;
  try {
    const st = statSync(file);
    if (!st.isFile()) return { ok: false, problem: message('reason.identity.notFile', { file }) };
    if (st.size > MAX_KEY_BYTES) return { ok: false, problem: message('reason.identity.tooBig', { file, bytes: st.size }) };
    data = readFileSync(file);
  } catch (e) {
    return { ok: false, problem: message('reason.identity.unreadable', { file, code: (e as NodeJS.ErrnoException).code ?? 'unreadable' }) };
  }
  let parsed: ReturnType<typeof utils.parseKey>;
  try {
    parsed = utils.parseKey(data);
  } catch {
    parsed = new Error('unparsable');
  }
  if (parsed instanceof Error) {
    // ssh2's own wording for both OpenSSH-format and PEM keys with a passphrase.
    if (/encrypted|passphrase/i.test(parsed.message)) return { ok: true, encrypted: true };
    return { ok: false, problem: message('reason.identity.notKey', { file }) };
  }
  // ssh2's typings say ParsedKey | Error; older key files parse to a list of keys.
  const key: ssh2.ParsedKey | undefined = Array.isArray(parsed) ? (parsed as ssh2.ParsedKey[])[0] : parsed;
  if (!key || key.getPrivatePEM() === null) return { ok: false, problem: message('reason.identity.publicKey', { file }) };
  return { ok: true, encrypted: false, key: data };
}

/**
 * Whether the bot can use this identity file as configured: a passphrase-protected key only through
 * an ssh agent (the bot never asks for passphrases). Null when usable.
 */
export function identityProblem(file: string, hasAgent: boolean): Message | null {
  const c = checkIdentityFile(file);
  if (!c.ok) return c.problem;
  if (c.encrypted && !hasAgent) return message('reason.identity.passphrase', { file });
  return null;
}
