// `gpu-doctor knowledge check` fails a rule whose title or fix still says TODO (issue 25 §3): a scaffold from
// `knowledge new` wins its example and has a near miss, yet its placeholders would reach a chat. Through the CLI
// with a temporary knowledge folder.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/gpu-doctor');
const LOG = join(ROOT, 'test/fixtures/eval-dev/003-cuda_oom.log'); // yolov5#2510, a real CUDA OOM
const cli = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });

describe('knowledge check and TODO', () => {
  it('each TODO left in a title or fix text is a problem (exit 1) until it is written', { timeout: 240_000 }, () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'gd-kb-todo-')), 'kb');
    expect(cli(['knowledge', 'new', 'small-card', '--from', LOG, '--dir', dir]).status).toBe(0);
    const nearMiss = readdirSync(join(ROOT, 'knowledge/host-oom-killed/match'))[0];
    copyFileSync(join(ROOT, 'knowledge/host-oom-killed/match', nearMiss), join(dir, 'small-card/no-match', nearMiss));
    const ruleFile = join(dir, 'small-card/rule.yaml');
    const scaffold = readFileSync(ruleFile, 'utf8');

    let check = cli(['knowledge', 'check', '--dir', dir]);
    expect(check.status).toBe(1);
    const problems = check.stdout.split('\n').filter((l) => l.includes('still says TODO'));
    expect(problems.map((l) => l.replace(/: ".*/, ''))).toEqual([
      'small-card: title still says TODO',
      'small-card: zh: title still says TODO',
      'small-card: fixes[0] (advice) text still says TODO',
      'small-card: fixes[0] (advice) zh: text still says TODO',
    ]);
    expect(check.stdout).toMatch(/4 problems\n$/);

    // Only the fix's English text left: one problem.
    const written = scaffold
      .replace(/title: 'TODO: what went wrong[^']*'/, "title: 'CUDA out of memory on a small card'")
      .replace(/title: 'TODO: 同一句话的中文[^']*'/, "title: '小显存卡上 CUDA 显存不足'")
      .replace(/text: 'TODO: 同一条修复建议的中文[^']*'/, "text: '减小 --batch-size。'");
    writeFileSync(ruleFile, written);
    check = cli(['knowledge', 'check', '--dir', dir]);
    expect(check.status).toBe(1);
    expect(check.stdout).toContain('small-card: fixes[0] (advice) text still says TODO');
    expect(check.stdout).toMatch(/1 rules, 2 examples, 1 problem\n$/);

    writeFileSync(ruleFile, written.replace(/text: 'TODO: the fix[^']*'/, "text: 'Lower --batch-size.'"));
    check = cli(['knowledge', 'check', '--dir', dir]);
    expect(check.stdout).toBe('1 rules, 2 examples, 0 problems\n');
    expect(check.status).toBe(0);
  });
});
