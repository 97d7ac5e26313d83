// The console chat driven through a pipe, as `printf '/gpu help\n' | npm start` does.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { displayWidth } from '../src/core/text-width.js';

const run = (input: string, lang = 'C.UTF-8') =>
  execFileSync('bin/gpu-doctor', ['bot'], {
    input,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '', LC_ALL: '', LC_MESSAGES: '', LANG: lang },
  });
const oom = readFileSync(new URL('../knowledge/cuda-oom/match/yolov5-issue-2510.log', import.meta.url), 'utf8');

describe('console chat over a pipe', () => {
  it('/gpu help lists the commands in lines of at most 100 columns', () => {
    const out = run('/gpu help\n');
    expect(out).toContain('/gpu diagnose');
    expect(out).toContain('/gpu notify add SIZE');
    const wide = out.split('\n').filter((l) => [...l].length > 100);
    expect(wide).toEqual([]);
  });

  it('a pasted log (no command) gets the diagnosis; "." ends the paste; chatter gets a hint', () => {
    const out = run(`${oom}\n.\nhello there\n`);
    expect(out).toContain('CUDA out of memory [cuda_oom]');
    expect(out).toContain('16 -> 8');
    expect(out).toContain('not a command or a log');
  });

  it('/gpu diagnose followed by a multi-line paste ending at the next /gpu line', () => {
    const out = run(`/gpu diagnose\n${oom}\n/gpu nosuchthing\n`);
    expect(out).toContain('16 -> 8');
    expect(out).toContain('Unknown command "nosuchthing"');
  });

  it('with LANG=zh_CN.UTF-8 it answers in Chinese, /gpu help in lines of at most 100 display columns', () => {
    const out = run('/gpu help\n/gpu nosuchthing\n', 'zh_CN.UTF-8');
    expect(out).toContain('贴上训练日志或报错堆栈');
    expect(out).toContain('诊断贴上的训练日志');
    expect(out).toContain('未知命令“nosuchthing”');
    expect(out).not.toContain('Paste a training log');
    // CJK characters take two columns in a terminal.
    const help = out.slice(0, out.indexOf('未知命令'));
    expect(help).toContain('/gpu whoami');
    const wide = help.split('\n').filter((l) => displayWidth(l) > 100);
    expect(wide).toEqual([]);
    expect(displayWidth('诊断 ab')).toBe(7);
  });

  it('an empty /gpu gets a clear answer', () => {
    expect(run('/gpu\n')).toContain('Which command?');
  });
});

/** The bot's console chat as a child process; `until` resolves once its output holds a string. */
function consoleBot() {
  const child = spawn('bin/gpu-doctor', ['bot'], { env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const until = (text: string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const t0 = Date.now();
      const poll = setInterval(() => {
        if (out.includes(text)) {
          clearInterval(poll);
          resolve();
        } else if (Date.now() - t0 > timeoutMs) {
          clearInterval(poll);
          reject(new Error(`no "${text}" within ${timeoutMs} ms; got ${out.length} chars`));
        }
      }, 10);
    });
  const write = (s: string) => new Promise<void>((r) => (child.stdin.write(s) ? r() : child.stdin.once('drain', () => r())));
  const end = () =>
    new Promise<number | null>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.once('exit', (code) => (clearTimeout(kill), resolve(code)));
      child.stdin.end();
    });
  return { child, until, write, end, output: () => out };
}

// Control characters a terminal acts on: C0 (but \n and \t), DEL and C1 (U+0080-U+009F, CSI/OSC among them).
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const HOSTILE_LINE = `RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 10.00 MiB free; 6.60 GiB reserved in total by PyTorch) \u001b]0;pwned\u0007\u001b[2J\u009b2J\u009d0;pwned\u009c\u0090qX\u009c done`;

describe('console chat: hostile pastes', () => {
  // 256 KB of blank lines: all the old check read (its first and last 128 KB), about a minute of
  // backtracking there; a terminal's readline splitting a bigger paste would only measure the pipe.
  it('a paste of 256 KB of blank lines before a log is answered within a bound (no regex backtracking)', { timeout: 180_000 }, async () => {
    const bot = consoleBot();
    try {
      await bot.write('/gpu help\n');
      await bot.until('/gpu diagnose', 60_000); // started
      const t0 = performance.now();
      await bot.write('\n'.repeat(256 * 1024) + oom + '\n.\n');
      await bot.until('16 -> 8', 120_000);
      const ms = performance.now() - t0;
      expect(ms, `answered after ${Math.round(ms)} ms`).toBeLessThan(3000);
    } finally {
      await bot.end();
    }
  });

  it('strips terminal control sequences from what it prints', () => {
    const out = run(`${oom}\n${HOSTILE_LINE}\n.\n`);
    expect(out).toContain('CUDA out of memory');
    expect(out).toContain('pwned');
    expect(out).not.toMatch(TERMINAL_CONTROLS);
  });
});

describe('CLI: terminal control sequences', () => {
  it('gpu-doctor diagnose prints no control sequence from the log', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gd-esc-')), 'esc.log');
    writeFileSync(file, `Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n${HOSTILE_LINE}\n`);
    const out = execFileSync('bin/gpu-doctor', ['diagnose', file], { encoding: 'utf8', timeout: 60_000 });
    expect(out).toContain('CUDA out of memory');
    expect(out).toContain('pwned');
    expect(out).not.toMatch(TERMINAL_CONTROLS);
  });

  it('gpu-doctor diagnose --json escapes DEL and C1 controls (JSON.stringify leaves them raw) and keeps the same value', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gd-esc-')), 'esc.log');
    writeFileSync(file, `Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n${HOSTILE_LINE}\n`);
    const out = execFileSync('bin/gpu-doctor', ['diagnose', '--json', file], { encoding: 'utf8', timeout: 60_000 });
    expect(out).not.toMatch(TERMINAL_CONTROLS);
    expect(out).toContain('\\u009b2J');
    expect(JSON.parse(out).diagnoses[0].evidence.join('\n')).toContain('\u009b2J');
  });

  it('an error message naming a hostile file name prints no control sequence', () => {
    let stderr = '';
    try {
      execFileSync('bin/gpu-doctor', ['diagnose', '/nonexistent/\u001b]0;pwned\u0007\u009b2J.log'], {
        encoding: 'utf8',
        timeout: 60_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      stderr = (e as { stderr: string }).stderr;
    }
    expect(stderr).toContain('no such file');
    expect(stderr).not.toMatch(TERMINAL_CONTROLS);
  });
});
