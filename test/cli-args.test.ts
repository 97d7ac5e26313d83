// The CLI's option parsing (node:util parseArgs, strict) through bin/gpu-doctor as a child process:
// every mistake is one line on stderr and exit 2 before anything runs; `--` ends the options.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = resolve(import.meta.dirname, '../bin/gpu-doctor');
const cli = (args: string[], input = '') => spawnSync(process.execPath, [BIN, ...args], { input, encoding: 'utf8', timeout: 60_000 });

function usageError(args: string[], message: string | RegExp): void {
  const r = cli(args);
  expect(r.status, args.join(' ')).toBe(2);
  expect(r.stdout, args.join(' ')).toBe('');
  expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
  if (typeof message === 'string') expect(r.stderr, args.join(' ')).toBe(`gpu-doctor: ${message}\n`);
  else expect(r.stderr, args.join(' ')).toMatch(message);
}

describe('gpu-doctor option parsing', () => {
  it('an unknown option names the nearest known one, for every subcommand (a single-dash word too)', () => {
    usageError(['diagnose', '--jsno'], 'unknown option --jsno; did you mean --json?');
    usageError(['diagnose', '-json'], 'unknown option -json; did you mean --json?');
    usageError(['digest', '--sample', 'x.jsonl'], 'unknown option --sample; did you mean --samples?');
    usageError(['hosts', 'add', 'gpu3', 'ml@10.0.0.3', '--trsut', 'SHA256:x'], 'unknown option --trsut; did you mean --trust?');
    usageError(['bot', '--confg', 'x.yaml'], 'unknown option --confg; did you mean --config?');
    usageError(['knowledge', 'check', '--dri', '/tmp'], 'knowledge check: unknown option --dri; did you mean --dir?');
    usageError(['mem', '--verbose'], 'unknown option --verbose');
  });

  it('an option without its value, or a flag given one, is a usage error', () => {
    usageError(['digest', '--samples'], '--samples needs a value');
    usageError(['diagnose', '--json=yes', '-'], '--json takes no value');
    usageError(['status', '--config', '--json'], /^gpu-doctor: --config needs a value, not the option --json/);
  });

  it('options may come before or after the file, as --opt=value, and -- ends them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-args-'));
    const log = join(dir, '--json');
    writeFileSync(log, 'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity)\n');
    const asText = spawnSync(process.execPath, [BIN, 'diagnose', '--', log.replace(dir, '.')], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(asText.status).toBe(0);
    expect(asText.stdout).toMatch(/out of memory/i);
    expect(() => JSON.parse(asText.stdout) as unknown).toThrow();
    const asJson = spawnSync(process.execPath, [BIN, 'diagnose', '--json', '--', '--json'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(asJson.status).toBe(0);
    expect((JSON.parse(asJson.stdout) as { diagnoses: { rule: string }[] }).diagnoses[0].rule).toBe('cuda-oom');
    const samples = join(dir, 'samples.jsonl');
    writeFileSync(samples, '');
    const digest = cli(['digest', `--samples=${samples}`, '--json']);
    expect(digest.status, digest.stderr).toBe(0);
    expect(JSON.parse(digest.stdout)).toBeTypeOf('object');
  });

  it('--help after -- is a file name, not a request for help', () => {
    const r = cli(['diagnose', '--', '--help']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('gpu-doctor: no such file: --help\n');
    const help = cli(['diagnose', '-h']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: gpu-doctor diagnose /);
  });
});
