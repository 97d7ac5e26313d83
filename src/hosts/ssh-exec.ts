// One fixed command on a pooled connection: a channel within the deadline (chat first), the command
// with stdin held open (its EOF is what the remote watchdog takes for "the bot gave up"), stdout and
// stderr capped separately while they are read; every channel the bot gives up on is closed, even
// one that opens after it gave up. A refused channel waits again, first in line, within the deadline.
import type { NodeSSH } from 'node-ssh';
import type { Client, ClientChannel } from 'ssh2';
import { PassThrough } from 'node:stream';
import type { ChannelSlots } from './ssh-channel-slots.js';
import type { Priority } from './source.js';
import { addr, SshError, type SshTarget } from './ssh-target.js';

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number | null;
  ms: number;
}

export const DEFAULT_MAX_STDOUT_BYTES = 8 << 20;
export const DEFAULT_MAX_STDERR_BYTES = 1 << 20;

/** Bytes kept per stream; more closes the channel and fails the request. */
export interface OutputCaps {
  maxStdoutBytes?: number;
  maxStderrBytes?: number;
}

export interface Conn {
  ssh: NodeSSH;
  /** node-ssh's ssh2 connection, kept: node-ssh forgets it on 'end', the pool still listens to it. */
  client: Client;
  channels: ChannelSlots;
  fingerprint: string;
  closed: boolean;
  connectMs: number;
  /** Called once when the connection goes away (requests running on it fail at once). */
  onClose: Set<() => void>;
  /** When a channel of ours on it last closed (performance.now()). */
  lastChannelClose: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

function closeChannel(channel: ClientChannel | null): void {
  if (!channel) return;
  try {
    channel.close();
  } catch {
    /* already closed with its connection */
  }
}

/** Waits for a channel (within the deadline) and runs the command on it. */
export async function runOn(
  conn: Conn,
  target: SshTarget,
  command: string,
  deadline: number,
  timeoutMs: number,
  priority: Priority,
  caps: OutputCaps,
  onRunning?: () => void,
): Promise<ExecResult> {
  const seconds = (timeoutMs / 1000).toFixed(1);
  const busy = () => new SshError(`timed out after ${seconds} s waiting for ${target.name} (all ${conn.channels.limit} channels busy)`, 'exec-timeout');
  let refused = false;
  for (;;) {
    const release = await conn.channels.acquire(priority, deadline, busy, refused);
    let pause = 0;
    try {
      for (let quickRetries = 0; ; quickRetries++) {
        // Granted in the same moment the deadline passed: no channel is opened for an answer nobody awaits.
        if (performance.now() >= deadline) throw busy();
        onRunning?.();
        const sentAt = performance.now();
        try {
          return await execOn(conn, target, command, deadline, timeoutMs, caps);
        } catch (e) {
          if (!(e instanceof SshError) || e.kind !== 'channel-refused') throw e;
          // A refused channel is not a broken connection: nothing is dropped, the request tries
          // again within its deadline. sshd frees a closed session only after handling every packet
          // it read with the close, so an open sent shortly after one of ours closed can be refused
          // although a session is free by the time the refusal arrives: retried at once, on this slot.
          if (sentAt - conn.lastChannelClose < 1000 && quickRetries < 3) continue;
          throw e;
        }
      }
    } catch (e) {
      if (!(e instanceof SshError) || e.kind !== 'channel-refused') throw e;
      // The host allows fewer sessions (sshd MaxSessions) than this pool opens: stay under what it
      // accepted, and wait for one of ours to end, first in line.
      refused = true;
      const others = conn.channels.busy - 1;
      conn.channels.lowerTo(others);
      // None of ours open: sessions the host still counts (closing ones) are in the way.
      if (others === 0) pause = 200;
      if (performance.now() >= deadline) throw new SshError(`timed out after ${seconds} s waiting for ${target.name} (${e.message})`, 'exec-timeout');
    } finally {
      release();
    }
    if (pause) await sleep(Math.min(pause, deadline - performance.now()));
  }
}

function execOn(conn: Conn, target: SshTarget, command: string, deadline: number, timeoutMs: number, caps: OutputCaps): Promise<ExecResult> {
  const started = performance.now();
  const maxOut = caps.maxStdoutBytes ?? DEFAULT_MAX_STDOUT_BYTES;
  const maxErr = caps.maxStderrBytes ?? DEFAULT_MAX_STDERR_BYTES;
  return new Promise<ExecResult>((resolve, reject) => {
    let channel: ClientChannel | null = null;
    let done = false;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let code: number | null = null;
    // stdin stays open for the whole command: node-ssh ends the channel's stdin at once unless given a
    // stream, and an EOF there is what the remote watchdog (CHANNEL_WATCHDOG) takes for "the bot gave up".
    const stdin = new PassThrough();
    const finish = (e: SshError | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.unpipe();
      stdin.destroy();
      conn.onClose.delete(onClose);
      if (channel) conn.lastChannelClose = performance.now();
      if (e) {
        // Given up (timeout, cap, error): close the channel so its session on the host ends too.
        closeChannel(channel);
        reject(e);
      } else
        resolve({
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          code,
          ms: Math.round(performance.now() - started),
        });
    };
    const onClose = () => finish(new SshError(`connection to ${addr(target)} dropped during the command`, 'dropped'));
    const timer = setTimeout(
      () => finish(new SshError(`timed out after ${(timeoutMs / 1000).toFixed(1)} s waiting for ${target.name}`, 'exec-timeout')),
      Math.max(0, deadline - performance.now()),
    );
    if (conn.closed) return onClose();
    conn.onClose.add(onClose);
    const capped = (stream: 'stdout' | 'stderr', max: number) =>
      new SshError(`${target.name} sent more than ${Math.round(max / 1024)} KiB on ${stream}; stopped reading and closed the channel`, 'output-cap');
    // node-ssh's execCommand: each chunk is counted and kept here as it arrives (its own string copy is
    // not used: it is cut per chunk), and the channel comes through onChannel, so the pool can close it.
    conn.ssh
      .execCommand(command, {
        noTrim: true,
        stdin,
        onChannel: (stream) => {
          // Opened after the bot gave up: closed at once, never left running on the host.
          if (done) {
            conn.lastChannelClose = performance.now();
            stream.on('error', () => undefined);
            return closeChannel(stream);
          }
          channel = stream;
          stream.on('error', (x: Error) => finish(new SshError(`channel error on ${addr(target)}: ${x.message.split('\n')[0].slice(0, 160)}`, 'other')));
        },
        onStdout: (d) => {
          if (done) return;
          outBytes += d.length;
          if (outBytes > maxOut) return finish(capped('stdout', maxOut));
          out.push(d);
        },
        onStderr: (d) => {
          if (done) return;
          errBytes += d.length;
          if (errBytes > maxErr) return finish(capped('stderr', maxErr));
          err.push(d);
        },
      })
      .then(
        (r) => {
          if (conn.closed) return onClose();
          code = r.code;
          finish(null);
        },
        (e: Error) => {
          if (conn.closed) return onClose();
          // A refused channel is that channel's answer, not a broken connection.
          const opening = /channel open failure/i.test(e.message);
          const broken = /not connected/i.test(e.message);
          finish(
            broken
              ? new SshError(`connection to ${addr(target)} is broken: ${e.message}`, 'dropped')
              : new SshError(
                  `${opening ? 'the host refused a channel' : 'the host refused the command'} on ${addr(target)}: ${e.message.replace(/^\(SSH\) /, '')}`,
                  opening ? 'channel-refused' : 'other',
                ),
          );
        },
      );
  });
}
