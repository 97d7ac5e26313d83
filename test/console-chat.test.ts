// The console chat driven through a pipe, as `printf '/gpu help\n' | npm start` does.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const run = (input: string) => execFileSync('bin/gpu-doctor', ['bot'], { input, encoding: 'utf8', timeout: 60_000, env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '' } });
const oom = readFileSync(new URL('../knowledge/cuda-oom/match/yolov5-issue-2510.log', import.meta.url), 'utf8');

describe('console chat over a pipe', () => {
  it('/gpu help lists the commands', () => {
    const out = run('/gpu help\n');
    expect(out).toContain('/gpu diagnose');
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

  it('an empty /gpu gets a clear answer', () => {
    expect(run('/gpu\n')).toContain('Which command?');
  });
});
