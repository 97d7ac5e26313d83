// Where an SSH request goes (a host, possibly behind ProxyJump hops) and how it fails: every failure
// of the pool is an SshError of one kind, its message one plain line.
import { english, type Text } from '../core/message.js';
export interface SshTarget {
  /** Registry name, for messages ("hosts trust NAME"). */
  name: string;
  host: string;
  port: number;
  user: string;
  identityFile?: string;
  /** Pinned SHA256 fingerprint; when absent, known_hosts decides. */
  hostKey?: string;
  /** Where the pin comes from, for the "changed" message: the config file or a trust made in chat. */
  pinnedBy?: 'config' | 'trust';
  proxyJump?: SshTarget;
}

export class SshError extends Error {
  /** What the error says, for a reply: a catalogue message (a host key refused) or the line itself. */
  readonly text: Text;
  constructor(
    said: Text,
    readonly kind:
      | 'refused'
      | 'timeout'
      | 'auth'
      | 'hostkey-unknown'
      | 'hostkey-changed'
      | 'dns'
      | 'unreachable'
      | 'dropped'
      | 'exec-timeout'
      | 'channel-refused'
      | 'output-cap'
      | 'other',
    readonly fingerprint?: string,
  ) {
    super(english(said));
    this.text = said;
  }
}

/** `host:port`, as messages name a host. */
export const addr = (t: SshTarget) => `${t.host}:${t.port}`;

/** A socket or handshake error as this host's SshError (the auth note says which keys were offered). */
export function describe(err: Error & { code?: string; level?: string }, target: SshTarget, authNote = ''): SshError {
  const a = addr(target);
  switch (err.code) {
    case 'ECONNREFUSED':
      return new SshError(`connection refused (${a})`, 'refused');
    case 'ETIMEDOUT':
      return new SshError(`timed out connecting to ${a}`, 'timeout');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new SshError(`host not found (${target.host})`, 'dns');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new SshError(`host unreachable (${a})`, 'unreachable');
    case 'ECONNRESET':
    case 'EPIPE':
      return new SshError(`connection reset by ${a}`, 'dropped');
    default:
      break;
  }
  if (err.level === 'client-authentication' || /authentication methods failed/i.test(err.message))
    return new SshError(`auth failed (${target.user}@${a}): key not accepted${authNote}`, 'auth');
  if (/timed out/i.test(err.message)) return new SshError(`timed out connecting to ${a}`, 'timeout');
  return new SshError(`ssh error (${a}): ${err.message.split('\n')[0].slice(0, 160)}`, 'other');
}
