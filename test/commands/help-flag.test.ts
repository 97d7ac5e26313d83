// Every chat command answers `--help` with its usage and summary (issue 25 §3), in the asker's language,
// through the registry with every registered command; a pasted log holding --help is still a paste.
import { describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { renderText } from '../../src/adapters/console/render.js';
import { t, type MessageKey } from '../../src/core/i18n.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';

const registry = new CommandRegistry(allCommands());
const ctx = (locale: 'en' | 'zh') => ({ platform: 'console' as const, userId: 'u', isAdmin: false, locale, services: {} as Services });

describe('/gpu CMD --help', () => {
  const names = allCommands().map((c) => c.name);

  it('covers every registered command', () => {
    expect(names.length).toBeGreaterThanOrEqual(12);
    expect([...registry.commands.keys()].sort()).toEqual([...names].sort());
  });

  it.each(names)('/gpu %s --help and -h: usage and summary, en and zh, nothing run', async (name) => {
    const command = registry.commands.get(name)!;
    for (const locale of ['en', 'zh'] as const) {
      for (const line of [`/gpu ${name} --help`, `/gpu ${name} -h`]) {
        const out = await registry.dispatch(line, ctx(locale));
        expect(out.outcome, line).toBe('ok');
        const text = renderText(out.reply);
        expect(text, line).toContain(t(locale, 'registry.usage.title', { usage: command.usage }));
        expect(text, line).toContain(t(locale, `cmd.${name}.summary` as MessageKey));
      }
    }
  });

  it('--help after other words still answers for commands with options; a paste holding --help is diagnosed', async () => {
    const chart = renderText((await registry.dispatch('/gpu chart gpu1 2 --help', ctx('en'))).reply);
    expect(chart).toContain('Usage: /gpu chart HOST');
    const paste = await registry.dispatch('/gpu diagnose python train.py --help\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB', ctx('en'));
    expect(renderText(paste.reply)).not.toContain('Usage: /gpu diagnose');
  });
});
