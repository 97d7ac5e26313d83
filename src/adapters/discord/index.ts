// Discord's descriptor for the adapters' registry (src/adapters/index.ts): turned on by DISCORD_TOKEN.
import { describeAdapter } from '../platform-adapter.js';
import { isDiscordAdmin } from './admin.js';
import { discordEnvFrom, discordEnvPart } from './env.js';

export const discordAdapter = describeAdapter({
  name: 'discord',
  env: { ...discordEnvPart, secrets: ['DISCORD_TOKEN'] },
  token: 'DISCORD_TOKEN',
  howToSet: 'DISCORD_TOKEN for Discord',
  settingsFrom: discordEnvFrom,
  modeOf: () => ({ mode: 'Discord', why: 'DISCORD_TOKEN is set' }),
  isAdmin: (config, userId, roleIds) => isDiscordAdmin(config, userId, roleIds),
  async start(deps, env, processEnv) {
    const { createDiscordAdapter } = await import('./app.js');
    // DISCORD_READY_TIMEOUT_MS (100 ms .. 10 min) shortens or lengthens the wait for READY; tests use it.
    const readyMs = Number(processEnv.DISCORD_READY_TIMEOUT_MS);
    const readyTimeoutMs = Number.isInteger(readyMs) && readyMs >= 100 && readyMs <= 600_000 ? readyMs : undefined;
    const discord = createDiscordAdapter({ ...deps, env, readyTimeoutMs });
    await discord.start();
    return {
      label: 'discord',
      stop: () => discord.stop(),
      postToChannel: (channel, reply) => discord.postToChannel(channel, reply),
      postToUser: (userId, reply) => discord.postToUser(userId, reply),
    };
  },
});
