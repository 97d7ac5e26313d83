// One reading of a memory size for every command that takes one (issue 25 §3): 40G, 40GB, 40GiB, 40 G and
// 40g are all 40 GiB (binary units), in chat through the registry (`/gpu fit`, `/gpu notify`) and the parser.
import { describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { renderText } from '../../src/adapters/console/render.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';
import { joinSizeWords, sizeMiB } from '../../src/core/size.js';
import { parseNotifyWords } from '../../src/fleet/args.js';

const FORMS = ['40G', '40GB', '40GiB', '40 G', '40g', '40gb', '40 GiB'];

describe('sizes', () => {
  it('every form of 40 GiB reads as 40960 MiB; M, MB and MiB as MiB', () => {
    for (const form of FORMS) expect(sizeMiB(form), form).toBe(40 * 1024);
    for (const form of ['24000M', '24000MB', '24000MiB', '24000 mb']) expect(sizeMiB(form), form).toBe(24000);
    expect(sizeMiB('7.5GB')).toBe(7680);
    for (const bad of ['40', 'G', '40 ', ' 40G', '40  G', '40GBs', '4e1G', '40KB', '-40G']) expect(sizeMiB(bad), bad).toBeUndefined();
  });

  it('chat splits `40 G` in two words: a number and a bare unit are joined, nothing else', () => {
    expect(joinSizeWords(['40', 'G', '2', '12h'])).toEqual(['40 G', '2', '12h']);
    expect(joinSizeWords(['add', '40', 'gib'])).toEqual(['add', '40 gib']);
    expect(joinSizeWords(['40G', '2', 'for', '12h'])).toEqual(['40G', '2', 'for', '12h']);
    expect(joinSizeWords(['2', '12h'])).toEqual(['2', '12h']);
  });

  it('/gpu fit takes every form: no usage error, the command runs', async () => {
    const registry = new CommandRegistry(allCommands());
    for (const form of FORMS) {
      const out = await registry.dispatch(`/gpu fit ${form} 2`, { platform: 'console', userId: 'u', isAdmin: true, services: {} as Services });
      // With no hosts registered the command itself answers so: the size and the count were accepted.
      expect(out.outcome, `${form}: ${renderText(out.reply)}`).toBe('ok');
    }
    const bad = await registry.dispatch('/gpu fit 40 X', { platform: 'console', userId: 'u', isAdmin: true, services: {} as Services });
    expect(bad.outcome).toBe('usage');
    expect(renderText(bad.reply)).toContain('count must be a number, not "X".');
  });

  it('/gpu notify reads the same sizes', () => {
    for (const form of FORMS)
      expect(parseNotifyWords([...form.split(' '), '2', 'for', '12h']), form).toMatchObject({ action: 'add', sizeMiB: 40 * 1024, count: 2, hours: 12 });
  });
});
