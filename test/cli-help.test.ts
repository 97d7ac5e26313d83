// `gpu-doctor --version` and `gpu-doctor CMD --help` (issue 13 §5): every subcommand answers with its
// own usage, options and an example, exit 0, through the CLI as a child process.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../bin/gpu-doctor');
const cli = (args: string[]) => run(process.execPath, [BIN, ...args], { timeout: 60_000 });

describe('gpu-doctor --version and per-command --help', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) expect((await cli([flag])).stdout).toBe(`gpu-doctor ${version}\n`);
  });

  it.each(['diagnose', 'bot', 'status', 'mem', 'hosts', 'digest', 'knowledge'])('%s --help: its own usage and an example, exit 0, nothing run', async (cmd) => {
    const { stdout, stderr } = await cli([cmd, '--help']);
    expect(stdout).toMatch(new RegExp(`^usage: gpu-doctor ${cmd}\\b`));
    if (cmd !== 'knowledge') expect(stdout).toMatch(/\nexample: gpu-doctor /);
    expect(stderr).toBe('');
    for (const line of stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(120);
  });
});
