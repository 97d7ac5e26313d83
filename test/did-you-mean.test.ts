// A mistyped command gets a suggestion (issue 13, item 5), in chat and in the CLI; a word far from every
// command gets none.
import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance } from '../src/core/did-you-mean.js';

const consoleChat = (input: string) =>
  execFileSync(process.execPath, ['bin/gpu-doctor', 'bot'], {
    input,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '' },
  });

describe('did you mean', () => {
  it('chat: /gpu statsu suggests /gpu status; /gpu banana suggests nothing', () => {
    const out = consoleChat('/gpu statsu\n/gpu banana\n');
    expect(out).toContain('Unknown command "statsu"\nDid you mean `/gpu status`?');
    expect(out).toMatch(/Unknown command "banana"\nCommands: /);
  });

  it('chat: an unknown option is named with the nearest one; a pasted command line after /gpu diagnose keeps its own flags', () => {
    const out = consoleChat('/gpu hosts list --jsno\n/gpu status --verbose\n/gpu diagnose python train.py --batch 16\n');
    expect(out).toContain('unknown option --jsno');
    expect(out).toContain('unknown option --verbose');
    expect(out).not.toContain('unknown option --batch');
  });

  it('CLI: an unknown option suggests the nearest one', () => {
    const r = spawnSync(process.execPath, ['bin/gpu-doctor', 'status', '--jsno'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown option --jsno; did you mean --json?');
  });

  it('CLI: gpu-doctor diagnoes suggests diagnose and exits 2', () => {
    const r = spawnSync(process.execPath, ['bin/gpu-doctor', 'diagnoes'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('did you mean "diagnose"?');
  });

  it('edit distance counts an adjacent swap as one edit and is bounded on long input', () => {
    expect(editDistance('statsu', 'status')).toBe(1);
    expect(editDistance('hsots', 'hosts')).toBe(1);
    expect(editDistance('mem', 'mem')).toBe(0);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(didYouMean('dig', ['digest', 'diagnose'])).toBeUndefined();
    expect(didYouMean('digets', ['digest', 'diagnose'])).toBe('digest');
    const t0 = performance.now();
    expect(didYouMean('x'.repeat(1_000_000), ['status'])).toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
