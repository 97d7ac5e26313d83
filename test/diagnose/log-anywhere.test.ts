// A log anywhere in a message (issue 12, item 5): prose before it, a code block around it, or the whole
// paste flattened onto one line (Discord's text option drops newlines). Real logs; the console chat and
// the CLI as public surfaces (the Slack and Discord adapters pass the same text to the same dispatch:
// see test/adapters for their paste handling).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');
const ultralytics = readFileSync(resolve(import.meta.dirname, '../fixtures/eval-extra/022-cuda_oom.log'), 'utf8');
const yolov5 = readFileSync(resolve(import.meta.dirname, '../fixtures/eval-dev/003-cuda_oom.log'), 'utf8');
const consoleChat = (input: string) =>
  execFileSync(process.execPath, [BIN, 'bot'], { input, encoding: 'utf8', timeout: 60_000, env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '' } });
const diagnoseText = async (text: string) => {
  const file = join(mkdtempSync(join(tmpdir(), 'gd-flat-')), 'paste.log');
  writeFileSync(file, text);
  return JSON.parse((await run(process.execPath, [BIN, 'diagnose', '--json', file])).stdout);
};

describe('a log anywhere in a message', () => {
  it('console: prose before a fenced log is answered with the fix', () => {
    const out = consoleChat(`my run died last night, log below:\n\`\`\`\n${yolov5}\n\`\`\`\nany idea?\n`);
    expect(out).toContain('CUDA out of memory [cuda_oom]');
    expect(out).toContain('16 -> 8');
  });

  it('a traceback flattened onto one line gets the same diagnosis as the original, and no corrected command', async () => {
    const original = await diagnoseText(ultralytics);
    const flat = await diagnoseText(`help, my training crashed: ${ultralytics.replace(/\n/g, ' ')}`);
    expect(flat.diagnoses[0].rule).toBe(original.diagnoses[0].rule);
    expect(flat.diagnoses[0].facts.triedAllocMiB).toBe(original.diagnoses[0].facts.triedAllocMiB);
    expect(flat.diagnoses[0].fixes[0].changes).toEqual(original.diagnoses[0].fixes[0].changes);
    expect(flat.diagnoses[0].fixes.every((f: { command?: string }) => f.command === undefined)).toBe(true);
    expect(flat.diagnoses[0].facts.commandLine).toBeUndefined();
    // the traceback's lines are back: the frames are evidence lines of their own
    expect(flat.diagnoses[0].evidence.some((l: string) => l.startsWith('RuntimeError: CUDA out of memory. Tried to allocate 1.33 GiB'))).toBe(true);
  });
});

describe('launcher line tags', () => {
  it("Open MPI's --tag-output ([1,19]<stderr>:), at line starts and mid-line, is stripped: the NCCL abort is read as a timeout", async () => {
    const out = await diagnoseText(
      readFileSync(resolve(import.meta.dirname, '../../knowledge/nccl-collective-timeout/match/mpirun-tagged-communicator-aborted.log'), 'utf8'),
    );
    expect(out.diagnoses[0].category).toBe('nccl_or_distributed');
    expect(out.diagnoses[0].evidence).toContain('RuntimeError: NCCL communicator was aborted on rank 19.');
  });
});
