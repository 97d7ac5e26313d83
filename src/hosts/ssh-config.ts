// ~/.ssh/config resolution as OpenSSH's `ssh -G` does it, for the keys gpu-doctor uses: HostName,
// User, Port, IdentityFile, ProxyJump. Checked against `ssh -G` on the same files (test/hosts/ssh-config.test.ts).
// Covered: Host blocks (* ? wildcards, ! negation), first value wins (IdentityFile accumulates),
// Include (relative paths under ~/.ssh as for a user config, ~, globs, conditional inside Host/Match,
// nesting up to 16), Match all/host/originalhost/user/localuser (comma lists, ! negation), HostName
// %h, IdentityFile %% %d %h %i %L %l %n %p %r %u and ~, ProxyJump chains (a,b) and ssh:// URIs.
// Anything OpenSSH would do that this cannot (Match exec/canonical/final/localnetwork/tagged,
// ProxyCommand, other % tokens) fails that host's resolution with a line naming file and line,
// rather than connecting somewhere `ssh` would not.
// In-process rather than running `ssh -G`: the production image has no ssh binary, and resolving
// here costs no process per host on every fan-out.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { hostname as localHostName, homedir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export class SshConfigError extends Error {}

export interface JumpHop {
  user?: string;
  host: string;
  port?: number;
}

export interface SshConfigEntry {
  /** HostName with %h expanded, or the alias itself. */
  hostName: string;
  user?: string;
  port?: number;
  /** Every IdentityFile that applies, in order, tokens and ~ expanded (none: ssh's defaults). */
  identityFiles: string[];
  /** First value, "none" read as no jump; a,b is kept whole (see jumpChain). */
  proxyJump?: string;
}

/** What `-l user -p port` on ssh's command line would give: wins over the config, and Match user sees it. */
export interface ResolveOverrides {
  user?: string;
  port?: number;
}

interface ResolveState {
  alias: string;
  overrides: ResolveOverrides;
  /** First value of each key that applied, and the file:line it came from. */
  got: Map<string, string>;
  setAt: Map<string, string>;
}

interface Directive {
  key: string;
  args: string[];
  file: string;
  line: number;
}

const MAX_INCLUDE_DEPTH = 16;

/** Who runs the bot: the %u %d %i %l %L tokens and ~ (from the password database, as ssh does). */
export interface LocalIdentity {
  user: string;
  home: string;
  uid: number;
  hostName: string;
}

function localIdentity(): LocalIdentity {
  const u = userInfo();
  return { user: u.username, home: u.homedir || homedir(), uid: u.uid, hostName: localHostName() };
}

export class SshConfig {
  /** Files and Include globs as first read: the config is read when the service starts, as before. */
  private parsed = new Map<string, Directive[] | null>();
  private globbed = new Map<string, string[]>();
  private local: LocalIdentity;

  constructor(
    private file: string | undefined,
    local?: LocalIdentity,
  ) {
    this.local = local ?? localIdentity();
  }

  static load(file: string | undefined): SshConfig {
    return new SshConfig(file ? expandHome(file) : undefined);
  }

  /** The config as `ssh -G [-l user] [-p port] alias` sees it. Throws SshConfigError on what it cannot follow. */
  resolve(alias: string, overrides: ResolveOverrides = {}): SshConfigEntry {
    const got = new Map<string, string>();
    const identityFiles: string[] = [];
    const state: ResolveState = { alias, overrides, got, setAt: new Map() };
    if (this.file) this.walk(this.file, state, identityFiles, true, 0);
    const rawHostName = got.get('hostname');
    // ssh lowercases the host name it connects to once the config is read (Host lines saw the alias as typed).
    const hostName = (rawHostName ? expandTokens(rawHostName, { h: alias }, 'HostName') : alias).toLowerCase();
    const portText = overrides.port === undefined ? got.get('port') : String(overrides.port);
    const port = portText === undefined ? undefined : Number(portText);
    if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new SshConfigError(`ssh config: bad Port ${portText} for ${alias}`);
    const user = overrides.user ?? got.get('user');
    const proxyCommand = got.get('proxycommand');
    if (proxyCommand && proxyCommand.toLowerCase() !== 'none')
      throw new SshConfigError(`ssh config: ${alias} uses ProxyCommand (${state.setAt.get('proxycommand')}), which gpu-doctor does not run; use ProxyJump`);
    const jump = got.get('proxyjump');
    const tokens = {
      '%': '%',
      d: this.local.home,
      h: hostName,
      i: String(this.local.uid),
      L: this.local.hostName.split('.')[0],
      l: this.local.hostName,
      n: state.alias,
      p: String(port ?? 22),
      r: user ?? this.local.user,
      u: this.local.user,
    };
    return {
      hostName,
      ...(user !== undefined ? { user } : {}),
      ...(port !== undefined ? { port } : {}),
      identityFiles: identityFiles.map((f) => this.tilde(expandTokens(f, tokens, 'IdentityFile'))),
      ...(jump && jump.toLowerCase() !== 'none' ? { proxyJump: jump } : {}),
    };
  }

  private walk(file: string, state: ResolveState, ids: string[], active: boolean, depth: number): void {
    const directives = this.directives(file);
    if (!directives) return;
    // Inside an include reached from an inactive block nothing ever applies (OpenSSH's NEVERMATCH).
    const neverMatch = !active;
    let on = active;
    for (const d of directives) {
      const where = `${d.file}:${d.line}`;
      // Host patterns match the alias as typed, case and all; Match host/originalhost ignore case (as in ssh).
      if (d.key === 'host') on = !neverMatch && matchList(d.args, state.alias, false);
      else if (d.key === 'match') on = !neverMatch && this.match(d, state);
      else if (d.key === 'include') {
        if (depth + 1 > MAX_INCLUDE_DEPTH) throw new SshConfigError(`ssh config: Include nested too deep at ${where}`);
        for (const pattern of d.args) for (const f of this.globInclude(pattern)) this.walk(f, state, ids, on, depth + 1);
      } else if (on) {
        if (d.key === 'identityfile') {
          if (d.args[0]) ids.push(d.args[0]);
        } else if (!state.got.has(d.key) && d.args.length) {
          // ProxyJump and ProxyCommand exclude each other: whichever comes first is the one ssh uses.
          if ((d.key === 'proxyjump' && state.got.has('proxycommand')) || (d.key === 'proxycommand' && state.got.has('proxyjump'))) continue;
          state.got.set(d.key, d.key === 'proxycommand' ? d.args.join(' ') : d.args[0]);
          state.setAt.set(d.key, where);
        }
      }
    }
  }

  /** One Match line, evaluated as OpenSSH's first pass does (the user so far, else the local user). */
  private match(d: Directive, state: ResolveState): boolean {
    const where = `${d.file}:${d.line}`;
    let result = true;
    for (let i = 0; i < d.args.length; i++) {
      const raw = d.args[i];
      const negate = raw.startsWith('!');
      const attr = (negate ? raw.slice(1) : raw).toLowerCase();
      if (attr === 'all') {
        if (d.args.length !== 1) throw new SshConfigError(`ssh config: Match all must stand alone at ${where}`);
        return !negate;
      }
      if (attr === 'canonical' || attr === 'final') {
        // No argument; they match only in passes ssh makes after canonicalising, which this does not model.
        if (!result) continue;
        throw new SshConfigError(`ssh config: Match ${attr} is not supported by gpu-doctor (${where}); use Host or Match host/user`);
      }
      const value = d.args[++i];
      if (value === undefined) throw new SshConfigError(`ssh config: Match ${attr} needs an argument at ${where}`);
      let hit: boolean;
      const patterns = value.split(',');
      switch (attr) {
        case 'host': {
          const hn = state.got.get('hostname');
          hit = matchList(patterns, hn ? expandTokens(hn, { h: state.alias }, 'HostName').toLowerCase() : state.alias, true);
          break;
        }
        case 'originalhost':
          hit = matchList(patterns, state.alias, true);
          break;
        case 'user':
          hit = matchList(patterns, state.overrides.user ?? state.got.get('user') ?? this.local.user, false);
          break;
        case 'localuser':
          hit = matchList(patterns, this.local.user, false);
          break;
        default:
          // Already false: the line cannot apply whatever this criterion says (ssh would not run an exec either way for us).
          if (!result) continue;
          throw new SshConfigError(`ssh config: Match ${attr} is not supported by gpu-doctor (${where}); use Host or Match host/user`);
      }
      if (hit === negate) result = false;
    }
    return result;
  }

  private directives(file: string): Directive[] | null {
    if (this.parsed.has(file)) return this.parsed.get(file)!;
    let text: string | null;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // The top file missing is no config at all (as before); an included one missing is skipped, as ssh does.
      text = null;
    }
    const out = text === null ? null : parseDirectives(text, file);
    this.parsed.set(file, out);
    return out;
  }

  /** Include PATTERN: ~ expanded, relative to ~/.ssh (a user config), globbed and sorted like glob(3). */
  private globInclude(pattern: string): string[] {
    const p = this.tilde(pattern);
    const abs = isAbsolute(p) ? p : join(this.local.home, '.ssh', p);
    // Read once, like the files themselves: every request resolves its hosts again.
    let files = this.globbed.get(abs);
    if (!files) this.globbed.set(abs, (files = globPath(abs)));
    return files;
  }

  private tilde(p: string): string {
    if (p === '~') return this.local.home;
    if (p.startsWith('~/')) return join(this.local.home, p.slice(2));
    return p;
  }
}

/** The hops of a ProxyJump value, first hop first. */
export function parseJumpChain(value: string): JumpHop[] {
  return value.split(',').map((spec) => {
    const s = spec.trim();
    const hop = s.startsWith('ssh://') ? parseUserHostPort(s.slice(6).replace(/\/$/, '')) : parseUserHostPort(s);
    if (!hop) throw new SshConfigError(`ssh config: bad ProxyJump hop "${s.slice(0, 80)}"`);
    return hop;
  });
}

/** Splits a config file into directives, with OpenSSH's quoting, `key=value` form and # comments. */
export function parseDirectives(text: string, file: string): Directive[] {
  const out: Directive[] = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].replace(/\r$/, '');
    let i = 0;
    while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
    if (i >= line.length || line[i] === '#') continue;
    let key = '';
    while (i < line.length && line[i] !== ' ' && line[i] !== '\t' && line[i] !== '=') key += line[i++];
    while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
    if (line[i] === '=') i++;
    const args = splitArgs(line.slice(i), `${file}:${n + 1}`);
    out.push({ key: key.toLowerCase(), args, file, line: n + 1 });
  }
  return out;
}

/** OpenSSH's argv_split: whitespace-separated, "..." and '...' quoting, \ escapes, # starts a comment. */
function splitArgs(s: string, where: string): string[] {
  const args: string[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
    if (i >= s.length || s[i] === '#') return args;
    let arg = '';
    let quote: string | null = null;
    for (; i < s.length; i++) {
      const c = s[i];
      if (quote === null && (c === ' ' || c === '\t')) break;
      if (c === '\\' && i + 1 < s.length && (s[i + 1] === '\\' || s[i + 1] === '"' || s[i + 1] === "'" || (quote === null && s[i + 1] === ' '))) {
        arg += s[++i];
      } else if (quote === null && (c === '"' || c === "'")) quote = c;
      else if (c === quote) quote = null;
      else arg += c;
    }
    if (quote !== null) throw new SshConfigError(`ssh config: unterminated quote at ${where}`);
    args.push(arg);
  }
}

/** % tokens: a token not in `tokens` is an error (OpenSSH refuses it too). */
function expandTokens(s: string, tokens: Record<string, string>, what: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '%') {
      out += s[i];
      continue;
    }
    const t = s[++i];
    if (t === '%') out += '%';
    else if (t !== undefined && Object.hasOwn(tokens, t)) out += tokens[t];
    else throw new SshConfigError(`ssh config: ${what} token %${t ?? ''} is not supported by gpu-doctor`);
  }
  return out;
}

/**
 * OpenSSH's pattern lists: any positive match and no negated one. `* ?` wildcards, matched without a
 * regex (two pointers, linear backtracking on the last `*` only).
 */
function matchList(patterns: string[], subject: string, caseless: boolean): boolean {
  const s = caseless ? subject.toLowerCase() : subject;
  let hit = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const p = caseless ? (negate ? raw.slice(1) : raw).toLowerCase() : negate ? raw.slice(1) : raw;
    if (wildcardMatch(p, s)) {
      if (negate) return false;
      hit = true;
    }
  }
  return hit;
}

export function wildcardMatch(pattern: string, s: string): boolean {
  let p = 0;
  let i = 0;
  let star = -1;
  let mark = 0;
  while (i < s.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === s[i])) {
      p++;
      i++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = i;
    } else if (star >= 0) {
      p = star + 1;
      i = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** glob(3) for * and ? in any path segment: sorted, dot files only for a pattern starting with '.'. */
function globPath(abs: string): string[] {
  const parts = abs.split('/').filter((x) => x !== '');
  let paths = ['/'];
  for (let k = 0; k < parts.length; k++) {
    const seg = parts[k];
    const last = k === parts.length - 1;
    const next: string[] = [];
    for (const base of paths) {
      if (!seg.includes('*') && !seg.includes('?')) {
        next.push(join(base, seg));
        continue;
      }
      let names: string[];
      try {
        names = readdirSync(base).sort();
      } catch {
        continue;
      }
      for (const name of names) if ((seg.startsWith('.') || !name.startsWith('.')) && wildcardMatch(seg, name)) next.push(join(base, name));
    }
    paths = last ? next : next.filter(isDir);
  }
  return paths.filter(isFile);
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
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
