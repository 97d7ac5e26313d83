// The chat platforms named once (src/core/platform.ts): every place that asks "is this a chat platform /
// one with a server" asks these, so a new platform is its name in CHAT_PLATFORMS, not an edit per union.
import { describe, expect, it } from 'vitest';
import { CHAT_PLATFORMS, isChatPlatform, isServerPlatform } from '../../src/core/platform.js';

describe('chat platforms', () => {
  it('every listed platform is a chat platform; those with a server are all but the console', () => {
    expect(CHAT_PLATFORMS.filter(isChatPlatform)).toEqual([...CHAT_PLATFORMS]);
    expect(CHAT_PLATFORMS.filter(isServerPlatform)).toEqual(CHAT_PLATFORMS.filter((p) => p !== 'console'));
  });

  it('anything else is neither, whatever its case or spacing', () => {
    expect(['cli', 'Slack', ' slack', 'constructor', 'toString', ''].filter((p) => isChatPlatform(p) || isServerPlatform(p))).toEqual([]);
  });
});
