// The chat platforms, named once (issue 24 §2): what a digest, a post target, a claim or an owner message
// says it goes to. A new platform is its adapter folder (src/adapters/<name>/, exporting its descriptor),
// its line in src/adapters/index.ts, and its entry here: the name and the form of its admin ids (the
// config's admins.<name> and channels.<name> are composed from this list; the core imports no adapter).
// test/adapters/registry.test.ts fails when this list and the adapters' registry differ.
export const CHAT_PLATFORMS = ['slack', 'discord', 'console'] as const;

export type ChatPlatform = (typeof CHAT_PLATFORMS)[number];

/** The platforms with a chat server to connect to (their own tokens, admins and channel lists). */
export type ServerPlatform = Exclude<ChatPlatform, 'console'>;

export const isChatPlatform = (p: string): p is ChatPlatform => (CHAT_PLATFORMS as readonly string[]).includes(p);
export const isServerPlatform = (p: string): p is ServerPlatform => p !== 'console' && isChatPlatform(p);

/**
 * What an id in `admins.<platform>` looks like, and the words a config error says about a wrong one.
 * Here rather than in the adapter: the config (src/config.ts) is loaded by every CLI command, which must
 * not import a chat adapter.
 */
export const ADMIN_ID_FORMS: { readonly [P in ServerPlatform]: { readonly pattern: RegExp; readonly says: string } } = {
  slack: { pattern: /^[UW][A-Z0-9]{2,20}$/, says: 'a Slack user ID like U012ABCDEF' },
  discord: { pattern: /^\d{5,25}$/, says: 'a Discord user or role ID' },
};

export const SERVER_PLATFORMS = CHAT_PLATFORMS.filter(isServerPlatform);
