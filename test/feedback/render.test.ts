// The feedback marker as each platform shows it, within its limits.
import { describe, expect, it } from 'vitest';
import type { Reply } from '../../src/core/reply.js';
import { blockKitProblems, renderSlack } from '../../src/adapters/slack/render.js';
import { feedbackComponents } from '../../src/adapters/discord/feedback.js';
import { renderText } from '../../src/adapters/console/render.js';

const ID = 'AbCdEfGhIjKlMnOp';
const long: Reply = {
  title: 'CUDA out of memory [cuda_oom]',
  severity: 'error',
  sections: Array.from({ length: 80 }, (_, i) => ({ text: `line ${i}` })),
  footer: 'rule cuda-oom',
  feedback: { id: ID },
};

describe('feedback rendering', () => {
  it('Slack: the buttons are the last block, also when the reply overflows 50 blocks', () => {
    for (const reply of [{ ...long, sections: long.sections.slice(0, 3) }, long]) {
      const { blocks } = renderSlack(reply);
      expect(blocks.length).toBeLessThanOrEqual(50);
      expect(blockKitProblems(blocks)).toEqual([]);
      const last = blocks[blocks.length - 1];
      expect(last).toMatchObject({
        type: 'actions',
        elements: [
          { action_id: 'feedback_up', value: ID },
          { action_id: 'feedback_down', value: ID },
        ],
      });
    }
    expect(renderSlack({ ...long, feedback: undefined }).blocks.some((b) => b.type === 'actions')).toBe(false);
  });

  it('Discord: one row of two buttons whose custom_ids fit in 100 characters', () => {
    const [row] = feedbackComponents(ID);
    expect(row.components.map((b) => ('custom_id' in b ? b.custom_id : ''))).toEqual([`fb:up:${ID}`, `fb:down:${ID}`]);
    for (const b of row.components) expect(('custom_id' in b ? b.custom_id : '').length).toBeLessThanOrEqual(100);
  });

  it('console: a hint under a diagnosis, none elsewhere', () => {
    expect(renderText(long)).toMatch(/— rule cuda-oom\nWas this right\? \/feedback up or \/feedback down$/);
    expect(renderText({ ...long, feedback: undefined })).not.toContain('/feedback');
  });
});
