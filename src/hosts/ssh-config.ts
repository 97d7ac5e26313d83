// A minimal ~/.ssh/config reader: Host blocks (with * ? wildcards and ! negation) and the keys
// gpu-doctor honours: HostName, User, Port, IdentityFile, ProxyJump. First value wins, as in ssh.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';

export interface SshConfigEntry {
  hostName?: string;
  user?: string;
  port?: number;
  identityFile?: string;
  proxyJump?: string;
}

interface Block {
  patterns: string[];
  options: Map<string, string>;
}

export class SshConfig {
  private blocks: Block[] = [];

  static load(file: string | undefined): SshConfig {
    const c = new SshConfig();
    if (!file) return c;
    let text: string;
    try {
      text = readFileSync(expandHome(file), 'utf8');
    } catch {
      return c;
    }
    c.parse(text);
    return c;
  }

  parse(text: string): void {
    let current: Block = { patterns: ['*'], options: new Map() };
    this.blocks.push(current);
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (!line || line.startsWith('#')) continue;
      const m = /^(\S+?)(?:\s*=\s*|\s+)(.+)$/.exec(line);
      if (!m) continue;
      const key = m[1].toLowerCase();
      const value = m[2].trim().replace(/^"(.*)"$/, '$1');
      if (key === 'host') {
        current = { patterns: value.split(/\s+/), options: new Map() };
        this.blocks.push(current);
      } else if (key === 'match') {
        current = { patterns: [], options: new Map() }; // Match blocks are not supported: ignored.
        this.blocks.push(current);
      } else if (!current.options.has(key)) current.options.set(key, value);
    }
  }

  resolve(alias: string): SshConfigEntry {
    const got = new Map<string, string>();
    for (const b of this.blocks) {
      if (!matches(b.patterns, alias)) continue;
      for (const [k, v] of b.options) if (!got.has(k)) got.set(k, v);
    }
    const out: SshConfigEntry = {};
    const hostName = got.get('hostname');
    if (hostName) out.hostName = hostName.replace(/%h/g, alias);
    if (got.get('user')) out.user = got.get('user');
    const port = Number(got.get('port'));
    if (Number.isInteger(port) && port > 0 && port < 65536) out.port = port;
    if (got.get('identityfile')) out.identityFile = expandHome(got.get('identityfile')!);
    const jump = got.get('proxyjump');
    if (jump && jump.toLowerCase() !== 'none') out.proxyJump = jump.split(',')[0].trim();
    return out;
  }
}

function matches(patterns: string[], host: string): boolean {
  let hit = false;
  for (const p of patterns) {
    const negate = p.startsWith('!');
    const re = new RegExp('^' + (negate ? p.slice(1) : p).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$', 'i');
    if (re.test(host)) {
      if (negate) return false;
      hit = true;
    }
  }
  return hit;
}

export function expandHome(p: string): string {
  if (p === '~' || p.startsWith('~/')) return resolve(homedir(), p.slice(2));
  return p;
}

/** "user@host:port" / "user@host" / "host:port" (ProxyJump and `hosts add` targets). */
export function parseUserHostPort(s: string): { user?: string; host: string; port?: number } | null {
  const m = /^(?:([a-z_][a-z0-9_.-]{0,31})@)?([A-Za-z0-9._-]{1,253}|\[[0-9A-Fa-f:.]{2,64}\])(?::(\d{1,5}))?$/i.exec(s);
  if (!m) return null;
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > 65535)) return null;
  return { ...(m[1] ? { user: m[1] } : {}), host: m[2].replace(/^\[|\]$/g, ''), ...(port ? { port } : {}) };
}
