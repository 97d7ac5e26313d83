// Abstain rather than guess (issue 12): a run that ends in an exception unrelated to memory gets "not a
// memory problem" naming the exception, and no memory fix; an OOM whose aftermath raised the final
// exception is still the OOM. Real logs through the CLI (its own entry, in this process).
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from './corpus-case.js';

const fixture = (rel: string) => resolve(import.meta.dirname, '..', rel);
/** What `gpu-doctor diagnose ARGS` prints, run in this process (corpus-case.ts). */
const diagnose = (...args: string[]) => diagnoseOutput(args);

describe('not a memory problem', () => {
  it.each([
    ['fixtures/abstain/desed-91-keyerror-worker.log', 'KeyError', "'metro_station_07-007300-008300'"],
    ['fixtures/eval-extra/060-unrelated.log', 'KeyError', '0'],
  ])('%s: names the %s and gives no memory fix', async (file, exception, message) => {
    const json = JSON.parse(await diagnose('--json', fixture(file)));
    expect(json.diagnoses).toEqual([]);
    expect(json.notMemory).toEqual({ exception, message });
    const text = await diagnose(fixture(file));
    expect(text).toContain(`Not a memory problem: the run ended with ${exception}: ${message}`);
    expect(text).not.toMatch(/Fix:|->|PYTORCH_CUDA_ALLOC_CONF/);
  });

  it('an OOM before the last traceback stays the diagnosis (fairseq skipped an OOM batch, then AttributeError on a None grad)', async () => {
    const json = JSON.parse(await diagnose('--json', fixture('fixtures/eval-extra/013-cuda_oom.log')));
    expect(json.diagnoses[0].category).toBe('cuda_oom');
    expect(json.notMemory).toBeUndefined();
  });

  it('an image-cache kill whose aftermath is an IndexError stays host memory (the rule needs the caching context)', async () => {
    const json = JSON.parse(await diagnose('--json', fixture('fixtures/eval-dev/009-host_oom_killed.log')));
    expect(json.diagnoses[0].category).toBe('host_oom_killed');
  });
});
