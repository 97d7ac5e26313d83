// Argument errors in chat read as sentences naming the argument as the usage line does (issue 25 §3),
// not zod's path and wording (`_.1: Invalid input: expected number, received NaN`), in English and Chinese,
// through the registry with every real command.
import { describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { renderText } from '../../src/adapters/console/render.js';
import type { Locale } from '../../src/core/i18n.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';

const registry = new CommandRegistry(allCommands());

async function problem(line: string, locale: Locale = 'en'): Promise<string> {
  const out = await registry.dispatch(line, { platform: 'console', userId: 'u', isAdmin: true, locale, services: {} as Services });
  expect(out.outcome, line).toBe('usage');
  const text = renderText(out.reply);
  // Never zod's own path or wording.
  expect(text, line).not.toMatch(/_\.\d|Invalid input|Too (big|small)|expected (number|array|string)|received/);
  return text;
}

describe('argument errors in chat', () => {
  it.each([
    ['/gpu chart gpu1 abc', 'GPU must be a number or all, not "abc".'],
    ['/gpu chart gpu1 al', 'GPU must be a number or all, not "al".'],
    ['/gpu chart gpu1 1 soon', 'hours must be a number, not "soon".'],
    ['/gpu chart gpu1 --theme blue', '--theme must be one of light, dark, not "blue".'],
    ['/gpu chart', 'HOST is missing.'],
    ['/gpu chart gpu1 1 2 3', 'Too many arguments: chart takes at most 3.'],
    ['/gpu fit 40G two', 'count must be a number, not "two".'],
    ['/gpu watch', 'HOST is missing.'],
    ['/gpu digest now', 'Too many arguments: digest takes at most 0.'],
  ])('%s: %s', async (line, sentence) => {
    const text = await problem(line);
    expect(text).toContain(sentence);
    expect(text).toContain('Usage: /gpu ');
  });

  it('the same sentences in Chinese, naming the argument the same way', async () => {
    expect(await problem('/gpu chart gpu1 abc', 'zh')).toContain('GPU 必须是数字或 all，而不是“abc”。');
    expect(await problem('/gpu chart gpu1 --theme blue', 'zh')).toContain('--theme 必须是 light, dark 之一，而不是“blue”。');
    expect(await problem('/gpu chart', 'zh')).toContain('缺少 HOST。');
  });

  it("a command's own wording for a range stays, without a path", async () => {
    const text = await problem('/gpu chart gpu1 99');
    expect(text).toContain('a GPU index: 0-63');
  });
});
