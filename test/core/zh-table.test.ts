// Tables with Chinese text line up in the console (issue 25 §3): columns are padded by display width (a
// Chinese character takes two terminal columns), measured here column by column in a zh reply's table.
import { describe, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { t } from '../../src/core/i18n.js';
import { displayWidth } from '../../src/core/text-width.js';

describe('console tables with Chinese text', () => {
  it('every cell of a column starts at the same display column', () => {
    const text = renderText({
      title: t('zh', 'registry.usage.title', { usage: 'hosts list' }),
      severity: 'info',
      locale: 'zh',
      sections: [
        {
          table: {
            columns: ['主机', '用户', '显存', '说明'],
            rows: [
              ['gpu1', '张伟', '40 GiB', '训练中'],
              ['服务器二号', 'alice', '7.5 GiB', 'idle'],
              ['h3', '李', '120 GiB', '显存泄漏预警'],
            ],
          },
        },
      ],
    });
    const lines = text.split('\n').slice(1);
    expect(lines).toHaveLength(5);
    // Where each column starts, in display columns, read back from each line by its cells.
    const cells = [
      ['主机', '用户', '显存', '说明'],
      null,
      ['gpu1', '张伟', '40 GiB', '训练中'],
      ['服务器二号', 'alice', '7.5 GiB', 'idle'],
      ['h3', '李', '120 GiB', '显存泄漏预警'],
    ];
    const starts = lines.map((line, i) => {
      const row = cells[i];
      if (!row) return null;
      let from = 0;
      return row.map((cell) => {
        const at = line.indexOf(cell, from);
        from = at + cell.length;
        return displayWidth(line.slice(0, at));
      });
    });
    const header = starts[0]!;
    expect(header).toEqual([0, 12, 19, 28]);
    for (const s of starts) if (s) expect(s).toEqual(header);
    // The rule under the header is as wide as each column.
    expect(lines[1].split('  ').map((d) => d.length)).toEqual([10, 5, 7, 12]);
  });
});
