// Registers the /gpu application command with Discord: guild commands (instant, for development)
// when DISCORD_GUILD_ID is set, global commands (production) otherwise.
//   DISCORD_TOKEN=... DISCORD_APPLICATION_ID=... [DISCORD_GUILD_ID=...] npm run discord:register
import { REST, Routes } from 'discord.js';
import { gpuCommand } from '../src/adapters/discord/commands.js';

const token = process.env.DISCORD_TOKEN;
const appId = process.env.DISCORD_APPLICATION_ID;
const guild = process.env.DISCORD_GUILD_ID;
if (!token || !appId) {
  console.error('Set DISCORD_TOKEN and DISCORD_APPLICATION_ID (and DISCORD_GUILD_ID for a guild-only registration).');
  process.exit(2);
}
const rest = new REST(process.env.DISCORD_API_URL ? { api: process.env.DISCORD_API_URL } : {}).setToken(token);
const route = guild ? Routes.applicationGuildCommands(appId, guild) : Routes.applicationCommands(appId);
try {
  const done = (await rest.put(route, { body: [gpuCommand] })) as { name: string; id: string }[];
  console.log(`Registered ${done.map((c) => `/${c.name}`).join(', ')} ${guild ? `in guild ${guild}` : 'globally (may take up to an hour to appear)'}.`);
} catch (e) {
  console.error(`Registration failed: ${(e as Error).message}`);
  process.exit(1);
}
