// Registers the /gpu application command with Discord: guild commands (instant, for development)
// when DISCORD_GUILD_ID is set, global commands (production) otherwise. The command is generated from
// the definitions in commands/, and what Discord answers it registered is printed as a tree.
//   DISCORD_TOKEN=... DISCORD_APPLICATION_ID=... [DISCORD_GUILD_ID=...] npm run discord:register
//   npm run discord:register -- --dry-run     # print the tree, send nothing (no token needed)
import { REST, Routes } from 'discord.js';
import { allCommands } from '../commands/index.js';
import { buildDiscordCommands, commandTree } from '../src/adapters/discord/commands.js';

const USAGE = 'Usage: npm run discord:register [-- --dry-run]';

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const unknown = argv.filter((a) => a !== '--dry-run');
  if (unknown.length) {
    console.error(`Unknown argument ${unknown[0]}. ${USAGE}`);
    return 2;
  }
  const { json } = buildDiscordCommands(allCommands());
  if (argv.includes('--dry-run')) {
    console.log(commandTree([json]));
    console.log('Dry run: nothing was sent to Discord.');
    return 0;
  }
  const missing = ['DISCORD_TOKEN', 'DISCORD_APPLICATION_ID'].filter((k) => !env[k]);
  if (missing.length) {
    console.error(
      `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set: set ${missing.length > 1 ? 'them' : 'it'} (and DISCORD_GUILD_ID for a guild-only registration), or use --dry-run to see the commands. ${USAGE}`,
    );
    return 2;
  }
  const guild = env.DISCORD_GUILD_ID;
  const rest = new REST(env.DISCORD_API_URL ? { api: env.DISCORD_API_URL } : {}).setToken(env.DISCORD_TOKEN!);
  const route = guild ? Routes.applicationGuildCommands(env.DISCORD_APPLICATION_ID!, guild) : Routes.applicationCommands(env.DISCORD_APPLICATION_ID!);
  try {
    const registered = (await rest.put(route, { body: [json] })) as Parameters<typeof commandTree>[0];
    console.log(commandTree(registered));
    console.log(`Registered ${guild ? `in guild ${guild}` : 'globally (may take up to an hour to appear)'}.`);
    return 0;
  } catch (e) {
    console.error(`Registration failed: ${(e as Error).message}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2), process.env);
