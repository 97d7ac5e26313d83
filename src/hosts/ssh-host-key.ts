// Host-key verification, strict: @revoked in known_hosts refuses a key wherever its line stands (over a
// pin too, as in OpenSSH); a pin (config host_key, or a trust made in chat) decides next; else the plain
// known_hosts lines. An unknown key, or one only a @cert-authority line could vouch for, is refused
// with its fingerprint so an admin can check it and trust it.
import { message } from '../core/message.js';
import type { KnownHosts } from './known-hosts.js';
import { addr, SshError, type SshTarget } from './ssh-target.js';

/** Whether the host key `blob` (fingerprint `fp`) is the one trusted for target, else the refusal. */
export function verifyHostKey(knownHosts: KnownHosts | undefined, target: SshTarget, blob: Buffer, fp: string): { ok: true } | { ok: false; error: SshError } {
  const known = knownHosts?.lookup(target.host, target.port) ?? [];
  // @revoked wins wherever its line stands, and over a pin too (as in OpenSSH).
  if (known.some((k) => k.revoked && k.blob.equals(blob)))
    return {
      ok: false,
      error: new SshError(message('reason.ssh.revoked', { name: target.name, addr: addr(target), fingerprint: fp }), 'hostkey-changed', fp),
    };
  if (target.hostKey) {
    if (fp === target.hostKey) return { ok: true };
    // Catalogue messages (reason.*): /gpu status and hosts test render them in the asker's language.
    const vars = { name: target.name, addr: addr(target), expected: target.hostKey, fingerprint: fp };
    return {
      ok: false,
      error: new SshError(message(target.pinnedBy === 'config' ? 'reason.ssh.changedPinned' : 'reason.ssh.changed', vars), 'hostkey-changed', fp),
    };
  }
  const valid = known.filter((k) => !k.revoked);
  if (valid.some((k) => k.blob.equals(blob))) return { ok: true };
  if (valid.length > 0)
    return {
      ok: false,
      error: new SshError(message('reason.ssh.changedKnownHosts', { name: target.name, addr: addr(target), fingerprint: fp }), 'hostkey-changed', fp),
    };
  if (knownHosts?.certAuthorities(target.host, target.port).length)
    return {
      ok: false,
      error: new SshError(
        // Kept under the 300 characters of an error line: `hosts trust NAME` shows the key again and how to confirm it.
        message('reason.ssh.certAuthority', { name: target.name, addr: addr(target), fingerprint: fp }),
        'hostkey-unknown',
        fp,
      ),
    };
  return {
    ok: false,
    error: new SshError(message('reason.ssh.unknown', { name: target.name, addr: addr(target), fingerprint: fp }), 'hostkey-unknown', fp),
  };
}
