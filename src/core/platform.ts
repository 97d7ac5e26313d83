// The chat platforms, named once (issue 24 §2): what a digest, a post target, a claim or an owner message
// says it goes to. A new platform is its adapter folder (src/adapters/<name>/), its name here, and its
// start in src/adapters/start.ts.
export const CHAT_PLATFORMS = ['slack', 'discord', 'console'] as const;

export type ChatPlatform = (typeof CHAT_PLATFORMS)[number];

/** The platforms with a chat server to connect to (their own tokens, admins and channel lists). */
export type ServerPlatform = Exclude<ChatPlatform, 'console'>;

export const isChatPlatform = (p: string): p is ChatPlatform => (CHAT_PLATFORMS as readonly string[]).includes(p);
export const isServerPlatform = (p: string): p is ServerPlatform => p !== 'console' && isChatPlatform(p);
