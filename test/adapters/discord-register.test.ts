// `npm run discord:register` (scripts/discord-register.ts) run as a process: --dry-run prints the
// command tree without calling Discord; with no token it says what is missing and exits 2 without a
// stack trace; with one it PUTs the generated /gpu command (here to the local fake) and prints what
// Discord answered it registered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ApplicationCommandOptionType as T } from 'discord.js';
import { allCommands } from '../../commands/index.js';
import { buildDiscordCommands } from '../../src/adapters/discord/commands.js';
import { APP_ID, FakeDiscord, GUILD_ID } from './fake-discord.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const json = buildDiscordCommands(allCommands()).json;
type Opt = { type: number; name: string; required?: boolean; options?: Opt[] };

/** The environment without any DISCORD_* variable of the machine running the tests. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DISCORD_')));
  return { ...env, ...extra };
}

function register(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/discord-register.ts', ...args], { cwd: ROOT, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** What the tree must show, counted from the generated JSON by this test. */
function expectTree(out: string, command: { name: string; options?: Opt[] }) {
  let groups = 0;
  let subs = 0;
  let options = 0;
  expect(out).toContain(`/${command.name} — `);
  for (const top of command.options ?? []) {
    if (top.type === T.SubcommandGroup) {
      groups++;
      expect(out).toMatch(new RegExp(`[├└]─ ${top.name} \\(group\\) — `));
    }
    for (const sub of top.type === T.SubcommandGroup ? (top.options ?? []) : [top]) {
      subs++;
      expect(out).toMatch(new RegExp(`[├└]─ ${sub.name} — `));
      for (const o of sub.options ?? []) {
        options++;
        expect(out).toMatch(new RegExp(`[├└]─ ${o.name} \\([a-z]+, ${o.required ? 'required' : 'optional'}`));
      }
    }
  }
  expect(out).toContain(`1 command, ${groups} subcommand group${groups === 1 ? '' : 's'}, ${subs} subcommands, ${options} options`);
  return { groups, subs, options };
}

let fake: FakeDiscord;
beforeAll(async () => {
  fake = await new FakeDiscord().start();
});
afterAll(async () => {
  await fake?.close();
});

describe('npm run discord:register', () => {
  it('--dry-run prints every command, group, subcommand and option as a tree and their count, sending nothing', async () => {
    const r = await register(['--dry-run'], cleanEnv({ DISCORD_API_URL: `${fake.base}/api` }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const counts = expectTree(r.stdout, json);
    expect(counts.groups).toBeGreaterThanOrEqual(1); // hosts
    // The hosts group, nested: add's options sit under add.
    expect(r.stdout).toMatch(/├─ hosts \(group\)[^\n]*\n│ {2}├─ list[^\n]*\n│ {2}├─ add[^\n]*\n│ {2}│ {2}├─ name \(string, required\)/);
    expect(r.stdout).toMatch(/─ digest — /);
    expect(r.stdout).toMatch(/─ watch — [^\n]*\n[│ ]+└─ host \(string, required, autocomplete\)/);
    expect(r.stdout).toContain('Dry run: nothing was sent to Discord.');
    expect(fake.calls).toEqual([]);
  }, 60_000);

  it('without DISCORD_TOKEN or DISCORD_APPLICATION_ID says which is missing and exits 2, no stack trace', async () => {
    let r = await register([], cleanEnv());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^DISCORD_TOKEN and DISCORD_APPLICATION_ID are not set/);
    expect(r.stderr).toContain('--dry-run');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    r = await register([], cleanEnv({ DISCORD_TOKEN: 'fake.discord.token' }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^DISCORD_APPLICATION_ID is not set/);
    r = await register(['--dryrun'], cleanEnv());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^Unknown argument --dryrun/);
  }, 60_000);

  it('registers the generated /gpu command in the guild and prints what Discord answered', async () => {
    const r = await register(
      [],
      cleanEnv({ DISCORD_TOKEN: 'fake.discord.token', DISCORD_APPLICATION_ID: APP_ID, DISCORD_GUILD_ID: GUILD_ID, DISCORD_API_URL: `${fake.base}/api` }),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [put] = fake.of(new RegExp(`^/applications/${APP_ID}/guilds/${GUILD_ID}/commands$`), 'PUT');
    expect(put.body).toEqual([json]);
    expectTree(r.stdout, json);
    expect(r.stdout).toContain(`Registered in guild ${GUILD_ID}.`);
  }, 60_000);
});
