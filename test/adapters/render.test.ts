// Every reply kind stays within Slack's Block Kit and Discord's embed limits; tables are split by
// rows (or sent as a file, with a note), never cut mid-row silently.
import { describe, expect, it } from 'vitest';
import { EmbedBuilder } from 'discord.js';
import type { Reply } from '../../src/core/reply.js';
import { renderSlack, blockKitProblems } from '../../src/adapters/slack/render.js';
import { renderDiscord, embedLength } from '../../src/adapters/discord/render.js';
import { chunkLines, chunkTable, tableLines } from '../../src/adapters/render-limits.js';
import { diagnosisReply } from '../../src/diagnose/reply.js';
import { diagnose } from '../../src/diagnose/diagnose.js';
import { decodeLog } from '../../src/diagnose/input.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { readFileSync, readdirSync } from 'node:fs';

const rows = (n: number, w = 3) => Array.from({ length: n }, (_, i) => Array.from({ length: w }, (_, j) => `r${i}c${j}-${'x'.repeat((i * 7 + j) % 30)}`));
const big = 'word '.repeat(8000);

const cases: Record<string, Reply> = {
  tiny: { title: 'ok', severity: 'ok', sections: [{ text: 'fine' }] },
  '500-row table': { title: 'GPU status', severity: 'info', sections: [{ table: { columns: ['host', 'gpu', 'user'], rows: rows(500) } }] },
  'wide table': {
    title: 'wide',
    severity: 'info',
    sections: [
      {
        table: {
          columns: ['a', 'b'],
          rows: [
            ['x'.repeat(5000), 'y'],
            ['z', 'w'],
          ],
        },
      },
    ],
  },
  '40k text': { title: 'long text', severity: 'warning', sections: [{ text: big }] },
  'one huge line': { title: 'line', severity: 'error', sections: [{ text: 'y'.repeat(20000) }] },
  '60 fields': {
    title: 'fields',
    severity: 'info',
    sections: [{ fields: Array.from({ length: 60 }, (_, i) => ({ label: `label ${i} ${'l'.repeat(300)}`, value: 'v'.repeat(3000) })) }],
  },
  'long code': {
    title: 'code',
    severity: 'info',
    sections: [{ code: Array.from({ length: 2000 }, (_, i) => `line ${i} \`\`\` ${'c'.repeat(i % 80)}`).join('\n') }],
  },
  '100 sections': {
    title: 'T'.repeat(400),
    severity: 'info',
    footer: 'f'.repeat(5000),
    sections: Array.from({ length: 100 }, (_, i) => ({
      heading: `h${i}`,
      text: `text ${i} <@U123> & *bold*`,
      table: { columns: ['k', 'v'], rows: rows(3, 2) },
    })),
  },
  'empty sections': { title: 'empty', severity: 'info', sections: [{}, { text: '' }, { table: { columns: ['a'], rows: [] } }] },
};

function checkDiscord(name: string, reply: Reply) {
  const m = renderDiscord(reply);
  expect(m.embeds.length).toBeLessThanOrEqual(10);
  for (const e of m.embeds) {
    // discord.js builders validate each part (throw on an over-long title, description, field...).
    const b = new EmbedBuilder().setTitle(e.title).setColor(e.color);
    if (e.description) b.setDescription(e.description);
    if (e.fields) b.addFields(e.fields);
    if (e.footer) b.setFooter(e.footer);
    expect(b.length, name).toBeLessThanOrEqual(6000);
    expect(embedLength(e)).toBeLessThanOrEqual(6000);
    expect((e.description ?? '').length).toBeLessThanOrEqual(4096);
    expect((e.fields ?? []).length).toBeLessThanOrEqual(25);
  }
  expect((m.content ?? '').length).toBeLessThanOrEqual(2000);
  return m;
}

describe('renderers stay within platform limits', () => {
  for (const [name, reply] of Object.entries(cases)) {
    it(name, () => {
      const s = renderSlack(reply);
      expect(blockKitProblems(s.blocks), name).toEqual([]);
      expect(s.text.length).toBeLessThanOrEqual(4000);
      checkDiscord(name, reply);
    });
  }

  it('a 500-row table: rows shown whole, the rest in a file, and the message says so', () => {
    const reply = cases['500-row table'];
    const { rows: lines } = tableLines(reply.sections[0].table!);
    const s = renderSlack(reply);
    const shown = s.blocks
      .filter((b) => b.type === 'section' && b.text?.text.startsWith('```'))
      .flatMap((b) => (b.text?.text ?? '').replace(/```/g, '').split('\n').slice(2));
    for (const l of shown) expect(lines).toContain(l);
    expect(JSON.stringify(s.blocks)).toMatch(/Showing 40 of 500 rows; the full table is in the attached table-1\.txt/);
    expect(s.files[0].data.toString().trim().split('\n')).toHaveLength(502);
    const d = renderDiscord(reply);
    expect(d.embeds[0].description).toMatch(/Showing \d+ of 500 rows; the full table is in table-1\.txt/);
    expect(d.files.map((f) => f.filename)).toContain('table-1.txt');
  });

  it('too many blocks: the rest goes to a file, with a note', () => {
    const s = renderSlack(cases['100 sections']);
    expect(s.blocks).toHaveLength(50);
    expect(JSON.stringify(s.blocks.at(-1))).toMatch(/attached gpu-doctor-reply\.txt/);
    expect(s.files.some((f) => f.filename === 'gpu-doctor-reply.txt' && f.data.toString().includes('text 99'))).toBe(true);
  });

  it('escapes Slack control characters so a paste cannot mention @channel or forge links', () => {
    const s = renderSlack({ title: 't', severity: 'info', sections: [{ text: '<!channel> <https://evil|click> a & b' }] });
    expect(JSON.stringify(s.blocks)).not.toContain('<!channel>');
    expect(JSON.stringify(s.blocks)).toContain('&lt;!channel&gt;');
  });

  it('escapes the fallback text too (what notifications show): a title cannot mention anyone', () => {
    const s = renderSlack({ title: 'Watch <!channel> <@U0VICTIM> & co', severity: 'info', sections: [] });
    expect(s.text).not.toMatch(/<!channel>|<@U0VICTIM>/);
    expect(s.text).toContain('Watch &lt;!channel&gt; &lt;@U0VICTIM&gt; &amp; co');
  });

  it('escapes Discord quote markers in linear time (a long run of blank lines)', () => {
    const t0 = performance.now();
    const d = renderDiscord({ title: 't', severity: 'info', sections: [{ text: '> quoted\n' + '\n'.repeat(50_000) }] });
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(JSON.stringify(d.embeds)).toContain('\\\\> quoted');
  });

  it('splits tables by rows only', () => {
    const t = { columns: ['a', 'b'], rows: rows(300, 2) };
    const { chunks, rowsShown } = chunkTable(t, 1000);
    expect(rowsShown).toBe(300);
    expect(chunks.every((c) => c.length <= 1000)).toBe(true);
    expect(chunks.flatMap((c) => c.split('\n').slice(2))).toEqual(tableLines(t).rows);
    expect(chunkLines('a\nb\nc', 3)).toEqual(['a\nb', 'c']);
  });

  it('every real diagnosis from the eval tracebacks renders within limits', async () => {
    const rules = await loadRuleBase();
    const dir = new URL('../fixtures/eval-dev/', import.meta.url);
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.log'))) {
      const input = decodeLog(readFileSync(new URL(f, dir)));
      const reply = diagnosisReply(diagnose(input.text, rules), input);
      expect(blockKitProblems(renderSlack(reply).blocks), f).toEqual([]);
      checkDiscord(f, reply);
    }
  });
});
