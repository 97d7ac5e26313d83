// known_hosts lookup (plain and hashed |1|salt|hash entries, [host]:port form, wildcards) and the
// SHA256 fingerprint as `ssh-keygen -lf` prints it. @cert-authority lines are read and reported
// (certAuthorities) but cannot vouch for a host here: ssh2 negotiates no host certificate algorithms
// (*-cert-v01@openssh.com), so the server only ever shows its plain key, never a certificate to check.
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';

export function fingerprintOf(keyBlob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '');
}

export interface KnownHostKey {
  type: string;
  blob: Buffer;
  revoked: boolean;
}

export class KnownHosts {
  private lines: { hosts: string; type: string; key: string; marker: string | null }[] = [];

  static load(file: string | undefined): KnownHosts {
    const k = new KnownHosts();
    if (!file) return k;
    try {
      k.parse(readFileSync(file, 'utf8'));
    } catch {
      /* no file: no known keys */
    }
    return k;
  }

  parse(text: string): void {
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (!line || line.startsWith('#')) continue;
      const parts = line.split(/\s+/);
      const marker = parts[0].startsWith('@') ? parts.shift()! : null;
      if (parts.length < 3) continue;
      this.lines.push({ hosts: parts[0], type: parts[1], key: parts[2], marker });
    }
  }

  /** Keys recorded for host (port 22: "host", else "[host]:port"). */
  lookup(host: string, port: number): KnownHostKey[] {
    const name = port === 22 ? host : `[${host}]:${port}`;
    const out: KnownHostKey[] = [];
    for (const l of this.lines) {
      if (l.marker === '@cert-authority' || !hostMatches(l.hosts, name)) continue;
      out.push({ type: l.type, blob: Buffer.from(l.key, 'base64'), revoked: l.marker === '@revoked' });
    }
    return out;
  }

  /** @cert-authority keys listed for host (not revoked ones): what OpenSSH would accept a host certificate from. */
  certAuthorities(host: string, port: number): KnownHostKey[] {
    const name = port === 22 ? host : `[${host}]:${port}`;
    return this.lines
      .filter((l) => l.marker === '@cert-authority' && hostMatches(l.hosts, name))
      .map((l) => ({ type: l.type, blob: Buffer.from(l.key, 'base64'), revoked: false }));
  }
}

function hostMatches(field: string, name: string): boolean {
  if (field.startsWith('|1|')) {
    const [, , salt, hash] = field.split('|');
    if (!salt || !hash) return false;
    const h = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
    return h === hash;
  }
  let hit = false;
  for (const p of field.split(',')) {
    const negate = p.startsWith('!');
    const pat = negate ? p.slice(1) : p;
    const re = new RegExp(
      '^' +
        pat
          .replace(/[.+^${}()|\\]/g, '\\$&')
          .replace(/\[/g, '\\[')
          .replace(/\]/g, '\\]')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.') +
        '$',
      'i',
    );
    if (re.test(name)) {
      if (negate) return false;
      hit = true;
    }
  }
  return hit;
}

/** ssh2 host key algorithm names for a known_hosts key type. */
export function algorithmsFor(types: string[]): string[] {
  const out: string[] = [];
  for (const t of types) {
    if (t === 'ssh-rsa') out.push('rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa');
    else out.push(t);
  }
  return [...new Set(out)];
}
