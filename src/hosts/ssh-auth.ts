// What a connection offers and accepts: the identity file's key (read here, never a passphrase asked)
// or the ssh agent's keys, no passwords, no keyboard-interactive; and, without a pin, only the host key
// algorithms known_hosts lists for the host (so the server presents the key that is checked).
import type { Config as NodeSshConfig } from 'node-ssh';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { checkIdentityFile } from './identity.js';
import { english } from '../core/message.js';
import { algorithmsFor, type KnownHosts } from './known-hosts.js';
import { addr, SshError, type SshTarget } from './ssh-target.js';

/** The pool's settings a connection's config is made of. */
export interface ConnectAuthOptions {
  connectTimeoutMs: number;
  keepaliveIntervalMs?: number;
  agent?: string;
  /** Tried when a target has no identity file of its own. */
  defaultIdentityFile?: string;
  knownHosts?: KnownHosts;
}

/** node-ssh's config for target over `sock`, with the note an auth failure adds; or why it cannot connect. */
export function connectConfig(target: SshTarget, sock: Duplex, opts: ConnectAuthOptions): { cfg: NodeSshConfig; authNote: string } | { error: SshError } {
  const cfg: NodeSshConfig = {
    sock,
    username: target.user,
    readyTimeout: opts.connectTimeoutMs + 1000,
    keepaliveInterval: opts.keepaliveIntervalMs ?? 15_000,
    keepaliveCountMax: 3,
    tryKeyboard: false,
  };
  const agent = opts.agent;
  if (agent) cfg.agent = agent;
  let authNote = '';
  const keyFile = target.identityFile ?? opts.defaultIdentityFile ?? defaultIdentity();
  if (keyFile) {
    const key = checkIdentityFile(keyFile);
    // The key itself, not its path: node-ssh then connects without a read of its own (see handshake).
    if (key.ok && !key.encrypted) cfg.privateKey = key.key.toString('utf8');
    else if (key.ok && key.encrypted) {
      // The bot never asks for passphrases: such a key works only through the agent holding it.
      if (!agent)
        return {
          error: new SshError(
            `auth failed (${target.user}@${addr(target)}): identity file ${keyFile} is passphrase-protected and no ssh agent is set (SSH_AUTH_SOCK)`,
            'auth',
          ),
        };
      authNote = ` (identity file ${keyFile} is passphrase-protected: only the ssh agent's keys were offered)`;
    } else if (!agent) return { error: new SshError(`auth failed (${target.user}@${addr(target)}): ${english(key.problem)}`, 'auth') };
    else authNote = ` (${english(key.problem)}: only the ssh agent's keys were offered)`;
  }
  if (!cfg.privateKey && !agent) return { error: new SshError(`no identity file and no ssh agent for ${target.name}`, 'auth') };
  if (!target.hostKey) {
    const types = (opts.knownHosts?.lookup(target.host, target.port) ?? []).filter((k) => !k.revoked).map((k) => k.type);
    if (types.length) cfg.algorithms = { serverHostKey: algorithmsFor(types) as never };
  }
  return { cfg, authNote };
}

function defaultIdentity(): string | undefined {
  for (const f of ['id_ed25519', 'id_ecdsa', 'id_rsa']) {
    const p = join(homedir(), '.ssh', f);
    if (existsSync(p)) return p;
  }
  return undefined;
}
