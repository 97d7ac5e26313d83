// The console chat's progress over a 24-host fleet of real sshd (ssh-fleet.ts): a live line rewritten
// in place in a terminal, plain lines through a pipe, then the full table; and readline's line editing
// and history in a terminal.
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConsoleChat, type ConsoleChatOptions } from '../../src/adapters/console/console-chat.js';
import type { CommandContext } from '../../src/core/command.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';
import { testDeps } from './helpers.js';
import { FLEET_SIZE, startSshFleet, type SshFleet } from './ssh-fleet.js';

const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');

const CLEAR_LINE = '\r\u001b[2K';

/** A console chat on in-memory streams; `until` resolves once the output holds `text` (or rejects after `ms`). */
function chat(deps: Awaited<ReturnType<typeof testDeps>>, interactive: boolean, progressPacing?: ConsoleChatOptions['progressPacing']) {
  const input = new PassThrough();
  const output = new PassThrough();
  let out = '';
  output.setEncoding('utf8').on('data', (d: string) => (out += d));
  const context: CommandContext = { platform: 'console', userId: 'tester', isAdmin: true, services: deps.services };
  const done = runConsoleChat({ input, output, registry: deps.registry, context, interactive, idleMs: 50, progressPacing });
  const until = async (text: string | RegExp, ms = 60_000) => {
    const t0 = Date.now();
    const seen = () => (typeof text === 'string' ? out.includes(text) : text.test(out));
    while (!seen()) {
      if (Date.now() - t0 > ms) throw new Error(`no ${String(text)} within ${ms} ms; output: ${JSON.stringify(out.slice(-2000))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { input, output: () => out, until, done };
}

const FINAL = `GPU status: ${FLEET_SIZE}/${FLEET_SIZE} hosts answered`;

describeWithSshd('console chat: progress of a long command', 'test/adapters/console-progress.test.ts', () => {
  let fleet: SshFleet;
  let deps: Awaited<ReturnType<typeof testDeps>>;
  beforeAll(async () => {
    fleet = await startSshFleet();
    deps = await testDeps();
    deps.services.hosts = fleet.hosts;
  }, 60_000);
  afterAll(async () => {
    deps?.audit.close();
    await fleet?.close();
  });

  it('through a pipe: progress lines, at most one a second, before the full table of 24 hosts', async () => {
    const c = chat(deps, false);
    const t0 = performance.now();
    c.input.write('/gpu status\n');
    await c.until(FINAL);
    const seconds = (performance.now() - t0) / 1000;
    c.input.end();
    await c.done;
    const out = c.output();
    const progress = out.split('\n').filter((l) => /^… (Checking 24 hosts…|GPU status: \d+ of 24 hosts answered…)/.test(l));
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.length).toBeLessThanOrEqual(Math.floor(seconds) + 2);
    expect(out.indexOf(progress[0])).toBeLessThan(out.indexOf(FINAL));
    // The final answer is the whole table: every host with its GPU row.
    const final = out.slice(out.indexOf(FINAL));
    for (const name of fleet.names) expect(final).toMatch(new RegExp(`${name} \\(\\d+ ms\\)`));
    expect(final).toContain('NVIDIA H100 80GB HBM3');
    expect(out).not.toContain(CLEAR_LINE);
  }, 90_000);

  it('the pacing holds back progress lines, never the answer: with an hour between updates, the table comes once the hosts answered', async () => {
    // The first update shows at once (no quiet period); every later one would wait an hour, and so
    // would the answer if the pacing held it (this test then fails on its timeout).
    const c = chat(deps, false, { quietMs: 0, intervalMs: 3_600_000 });
    c.input.write('/gpu status\n');
    await c.until(FINAL);
    c.input.end();
    await c.done;
    const out = c.output();
    const progress = out.split('\n').filter((l) => l.startsWith('… '));
    expect(progress).toHaveLength(1);
    expect(progress[0]).toMatch(/^… (Checking 24 hosts…|GPU status: \d+ of 24 hosts answered…)/);
    const final = out.slice(out.indexOf(FINAL));
    for (const name of fleet.names) expect(final).toMatch(new RegExp(`${name} \\(\\d+ ms\\)`));
  }, 90_000);

  it('in a terminal: one live line rewritten in place, then cleared and replaced by the table', async () => {
    const c = chat(deps, true);
    await c.until('> ');
    c.input.write('/gpu status\r');
    await c.until(FINAL);
    c.input.end();
    await c.done;
    const out = c.output();
    const live = [...out.matchAll(/\r\u001b\[2K(… [^\r\n]*)/g)].map((m) => m[1]);
    expect(live.length).toBeGreaterThanOrEqual(1);
    expect(live[0]).toMatch(/^… (Checking 24 hosts…|GPU status: \d+ of 24 hosts answered…)/);
    // The live line never ends in a newline (it is rewritten), and the answer starts on a cleared line.
    for (const l of live) expect(out).not.toContain(`${l}\n`);
    expect(out).toContain(`${CLEAR_LINE}[`);
    expect(out.lastIndexOf('… ')).toBeLessThan(out.indexOf(FINAL));
  }, 90_000);

  it('a pasted log naming a host: the diagnosis shows while the host is read, then the answer adds the reading', async () => {
    const c = chat(deps, false);
    // gpu03 is on the slowest sshd of the fleet: its reading takes about two seconds.
    c.input.write(`/gpu diagnose host:gpu03\n${OOM}\n.\n`);
    await c.until(/\[[!✗i✓]\] CUDA out of memory/);
    c.input.end();
    await c.done;
    const out = c.output();
    const progress = out.split('\n').find((l) => l.startsWith('… CUDA out of memory'));
    expect(progress).toBeDefined();
    expect(out.indexOf(progress!)).toBeLessThan(out.search(/\[[!✗i✓]\] CUDA out of memory/));
    const answer = out.slice(out.search(/\[[!✗i✓]\] CUDA out of memory/));
    expect(answer).toContain('16 -> 8');
    expect(answer).toMatch(/gpu03/);
    expect(answer).not.toContain('Reading gpu03 now…');
  }, 90_000);
});

describe('console chat in a terminal: line editing and history', () => {
  let deps: Awaited<ReturnType<typeof testDeps>>;
  beforeAll(async () => {
    deps = await testDeps();
  });
  afterAll(() => deps?.audit.close());

  it('backspace edits the line being typed, and up-arrow brings back the last command (not other lines)', async () => {
    const c = chat(deps, true);
    await c.until('> ');
    // "/gpu hepl", two backspaces, "lp": the line sent is "/gpu help".
    c.input.write('/gpu hepl\u007f\u007flp\r');
    await c.until('What gpu-doctor can do');
    const count = (text: string) => c.output().split(text).length - 1;
    const helps = count('What gpu-doctor can do');
    // A line that is not a command is answered but kept out of the history.
    c.input.write('hello there\r');
    await c.until('not a command or a log');
    c.input.write('\u001b[A\r'); // up arrow, enter: the last command again
    await c.until(/What gpu-doctor can do[\s\S]*What gpu-doctor can do/);
    expect(count('What gpu-doctor can do')).toBeGreaterThan(helps);
    expect(count('not a command or a log')).toBe(1);
    expect(c.output()).not.toContain('Unknown command');
    c.input.end();
    await c.done;
  }, 30_000);
});
