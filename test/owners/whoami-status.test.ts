// Owners, not pids (issue 14 §3): `/gpu whoami` claims kept in the registry's SQLite database and
// approved by an admin, the config's `owners:`, and `/gpu status` naming the people, through the bot as
// `createApp` builds it from a config file over a real sshd host (the 8x H200 reading: alice and bob
// run vLLM, GPU 7's process is in a container whose pid the host's ps does not know).
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { renderDiscord } from '../../src/adapters/discord/render.js';
import { renderSlack } from '../../src/adapters/slack/render.js';
import { createApp, type App } from '../../src/app.js';
import type { CommandContext, Platform } from '../../src/core/command.js';
import { makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';

const ADMIN = 'UADMIN001';
const ALICE = 'UALICE001';
const BOB_DISCORD = '223456789012345678';

describeWithSshd('whoami claims and status naming people over a real sshd host', 'test/owners/whoami-status.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-owners-'));
  let host: SshdInstance;
  let app: App;

  const ctx = (userId: string, platform: Platform = 'slack'): CommandContext => ({ platform, userId, isAdmin: userId === ADMIN, services: app.services });
  const run = async (line: string, userId: string, platform: Platform = 'slack') => {
    const out = await app.registry.dispatch(line, ctx(userId, platform));
    return { ...out, text: renderText(out.reply) };
  };

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    host = await startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' });
    writeFileSync(
      join(root, 'config.yaml'),
      [
        `data_dir: ${join(root, 'data')}`,
        'ssh:',
        `  identity_file: ${key.keyFile}`,
        `  known_hosts: ${join(root, 'known_hosts')}`,
        '  connect_timeout_ms: 5000',
        '  exec_timeout_ms: 5000',
        'hosts:',
        `  - { name: gpu-a, host: 127.0.0.1, port: ${host.port}, host_key: "${host.fingerprint}" }`,
        'admins:',
        `  slack: [${ADMIN}]`,
        'owners:',
        `  bob: { discord: "${BOB_DISCORD}", name: Bob Builder }`,
        '',
      ].join('\n'),
    );
    app = await createApp(join(root, 'config.yaml'));
  });

  afterAll(async () => {
    await app?.close();
    await host?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('claim -> a non-admin approve is refused -> an admin approves -> status names the person', async () => {
    const before = await run('/gpu status gpu-a', ALICE);
    expect(before.reply.sections[1].table!.rows[0].slice(0, 3)).toEqual(['0', 'alice', '1328667']);

    const claim = await run('/gpu whoami alice Alice Liddell', ALICE);
    expect(claim.outcome).toBe('ok');
    const id = /Claim #(\d+): alice is me \(Alice Liddell\)/.exec(claim.reply.title)?.[1];
    expect(id, claim.text).toBeDefined();
    // Kept in the registry's database, readable by the bot's user only.
    expect(statSync(join(root, 'data', 'gpu-doctor.sqlite')).mode & 0o777).toBe(0o600);

    // Pending: status still shows the unix user.
    expect((await run('/gpu status gpu-a', ALICE)).reply.sections[1].table!.rows[0][1]).toBe('alice');
    expect((await run('/gpu whoami', ALICE)).text).toContain(`waiting for an admin (#${id})`);

    // Not an admin: refused, and the claim is still waiting (also for the claimant herself).
    for (const line of [`/gpu whoami approve ${id}`, `/gpu whoami confirm ${id}`, `/gpu whoami reject ${id}`, '/gpu whoami pending']) {
      const refused = await run(line, ALICE);
      expect(refused.outcome, line).toBe('denied');
    }
    const pending = await run('/gpu whoami pending', ADMIN);
    // The claimant by account, never by the name she typed (issue 22 item 9): her Slack mention and id.
    expect(pending.text).toContain(
      `#${id}: alice, asked by slack user ${ALICE} (slack id ${ALICE}), who gave the name "Alice Liddell" (not checked). No owner of alice in the config`,
    );
    expect(JSON.stringify(renderSlack(pending.reply).blocks)).toContain(`asked by <@${ALICE}> (slack id ${ALICE})`);

    const approved = await run(`/gpu whoami approve ${id}`, ADMIN);
    expect(approved.outcome).toBe('ok');
    expect(approved.reply.title).toBe(`Claim #${id} approved: alice`);
    // The approval names the claimant: a Slack mention (it notifies her: she asked), her name in the console.
    expect(JSON.stringify(renderSlack(approved.reply).blocks)).toContain(`<@${ALICE}> (alice)`);
    expect(approved.text).toContain('alice on every host is now Alice Liddell (alice)');
    expect((await run(`/gpu whoami approve ${id}`, ADMIN)).reply.title).toBe(`No claim #${id} waiting`);

    const after = await run('/gpu status gpu-a', ALICE);
    const rows = after.reply.sections[1].table!.rows;
    // alice runs on the even GPUs, bob (from the config) on the odd ones.
    expect(after.text).toMatch(/0 +Alice Liddell \(alice\) +1328667/);
    expect(after.text).toMatch(/1 +Bob Builder \(bob\) +/);
    // The tables are the same on every platform: names, never mention markup (code blocks show none).
    const slack = JSON.stringify(renderSlack(after.reply).blocks);
    expect(slack).toContain('Alice Liddell (alice)');
    expect(slack).toContain('Bob Builder (bob)');
    expect(slack).not.toContain('<@');
    const discord = JSON.stringify(renderDiscord(after.reply).embeds);
    expect(discord).toContain('Alice Liddell (alice)');
    expect(discord).not.toContain('<@');
    expect(rows).toHaveLength(8);
    expect((await run('/gpu whoami', ALICE)).text).toMatch(/alice +every host +approved/);
  });

  it('bad unix user names and bad display names are answered clearly and stored nowhere', async () => {
    const cases: [string, RegExp][] = [
      ['/gpu whoami Alice', /"Alice" is not a unix user name.*lower case: alice\?/],
      ['/gpu whoami 9lives', /"9lives" is not a unix user name/],
      ['/gpu whoami a;rm${IFS}-rf', /is not a unix user name/],
      ['/gpu whoami $(id)', /"\$\(id\)" is not a unix user name/],
      ['/gpu whoami aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', /is not a unix user name/],
      ['/gpu whoami carol@bad/host', /after @ comes a host name/],
      ['/gpu whoami carol <!channel>', /"<!channel>" is not a display name/],
      ['/gpu whoami approve Abc', /approve takes a claim ID or the unix user claimed: "Abc" is not a unix user name/],
      ['/gpu whoami approve abc', /No claim for abc waiting/],
      ['/gpu whoami reject 1 2', /reject takes one claim ID/],
      ['/gpu whoami claim', /claim takes your unix user name/],
    ];
    for (const [line, want] of cases) {
      const r = await run(line, ADMIN);
      expect(r.text, line).toMatch(want);
      expect(r.reply.severity, line).toBe('warning');
    }
    expect((await run('/gpu whoami pending', ADMIN)).reply.title).toBe('No claims waiting');
    // The config's mapping is the config's: a claim cannot take it over.
    expect((await run('/gpu whoami bob', BOB_DISCORD, 'discord')).text).toContain('bob is already you, in the bot');
    expect((await run('/gpu whoami bob', '323456789012345678', 'discord')).text).toContain('bob is mapped in the bot');
  });

  it('an admin may approve by the unix user when one claim waits for it; with two, by ID', async () => {
    await run('/gpu whoami carol', 'UCAROL001');
    const one = await run('/gpu whoami approve carol', ADMIN);
    expect(one.reply.title).toMatch(/^Claim #\d+ approved: carol$/);
    await run('/gpu whoami dave', 'UDAVE0001');
    await run('/gpu whoami dave Dave', 'UMALLORY1');
    const two = await run('/gpu whoami approve dave', ADMIN);
    expect(two.reply.title).toBe('2 claims for dave are waiting');
    expect(two.text).toMatch(/Pick one by ID: #\d+, #\d+/);
    expect((await run('/gpu whoami approve dave', 'UDAVE0001')).outcome).toBe('denied');
    const pending = (await app.services.owners!.pending()).filter((c) => c.unixUser === 'dave');
    expect((await run(`/gpu whoami reject ${pending[1].id}`, ADMIN)).reply.title).toBe(`Claim #${pending[1].id} rejected`);
    expect((await run('/gpu whoami approve dave', ADMIN)).reply.title).toBe(`Claim #${pending[0].id} approved: dave`);
    expect(app.services.owners!.lookup('gpu-a', 'dave')).toEqual({ unixUser: 'dave', host: null, slack: 'UDAVE0001' });
  });
});
