// `gpu-doctor knowledge check|new` (issue 14 §5) through the CLI: a lab grows its own rule base from a
// real log, and check runs the lint and every example, as the repo's own tests do.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');
const root = resolve(import.meta.dirname, '../..');
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { maxBuffer: 16 << 20, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
const LOG = resolve(root, 'test/fixtures/eval-dev/003-cuda_oom.log'); // yolov5#2510, a real CUDA OOM

describe('gpu-doctor knowledge', () => {
  it('check on the shipped rule base: every rule complete, every example holds', { timeout: 120_000 }, async () => {
    const r = await cli(['knowledge', 'check']);
    expect(r.stdout).toMatch(/^\d{2,3} rules, \d{3,4} examples, 0 problems\n$/m);
    expect(r.code).toBe(0);
  });

  it('new scaffolds a rule around a real log; check names what is missing, then passes once a near miss is added', { timeout: 120_000 }, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'gd-kb-')), 'kb');
    const made = await cli(['knowledge', 'new', 'yolo-small-card', '--from', LOG, '--dir', dir]);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/suggested pattern: RuntimeError: CUDA out of memory\\\. Tried to allocate \\d\{1,12\}/);
    expect(readFileSync(join(dir, 'yolo-small-card/match/003-cuda_oom.log'), 'utf8')).toBe(readFileSync(LOG, 'utf8'));
    let check = await cli(['knowledge', 'check', '--dir', dir]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('yolo-small-card: no no-match/*.log example');
    // A near miss: a real log of another failure (a host OOM kill) must not be won by the new rule.
    const nearMiss = readdirSync(resolve(root, 'knowledge/host-oom-killed/match'))[0];
    copyFileSync(resolve(root, 'knowledge/host-oom-killed/match', nearMiss), join(dir, 'yolo-small-card/no-match', nearMiss));
    // The scaffold's TODO texts written (test/cli/knowledge-todo.test.ts checks that each is a problem until then).
    const ruleFile = join(dir, 'yolo-small-card/rule.yaml');
    writeFileSync(ruleFile, readFileSync(ruleFile, 'utf8').replace(/'TODO:[^']*'/g, "'Lower --batch-size on the small card.'"));
    check = await cli(['knowledge', 'check', '--dir', dir]);
    expect(check.stdout).toBe('1 rules, 2 examples, 0 problems\n');
    expect(check.code).toBe(0);
    // A rule that stops winning on its own example is a problem.
    writeFileSync(join(dir, 'yolo-small-card/match/other.log'), readFileSync(resolve(root, 'knowledge/host-oom-killed/match', nearMiss)));
    check = await cli(['knowledge', 'check', '--dir', dir]);
    expect(check.stdout).toContain('yolo-small-card: match/other.log: the first diagnosis is none, not yolo-small-card');
    expect(check.code).toBe(1);
  });

  it('bad input: a bad id, an existing rule, a missing --from, an unknown action: one line, exit 2, nothing written', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'gd-kb-')), 'kb');
    for (const args of [
      ['knowledge', 'new', 'Bad_ID', '--from', LOG, '--dir', dir],
      ['knowledge', 'new', 'ok-id', '--dir', dir],
      ['knowledge', 'new', 'cuda-oom', '--from', LOG, '--dir', resolve(root, 'knowledge')],
      ['knowledge', 'frobnicate'],
      ['knowledge', 'check', '--bogus'],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^gpu-doctor: /);
    }
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(resolve(root, 'knowledge/cuda-oom/match/003-cuda_oom.log'))).toBe(false);
  });

  it('a rule file that does not load is reported, not thrown', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-kb-'));
    await cli(['knowledge', 'new', 'broken-rule', '--from', LOG, '--dir', dir]);
    writeFileSync(join(dir, 'broken-rule/rule.yaml'), readFileSync(join(dir, 'broken-rule/rule.yaml'), 'utf8').replace(/^ {2}- '.*'$/m, "  - '(unclosed'"));
    const r = await cli(['knowledge', 'check', '--dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^\(load\): .*not a valid re2 pattern/m);
  });
});
