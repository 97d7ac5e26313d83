// 👍 / 👎 on Slack: a reply's `feedback` marker becomes an actions block of two buttons (value: the
// diagnosis id), and a click (block_actions) is acked at once, then run as `/gpu feedback up|down ID`
// (audited like any command; the store looks the id up, never trusting the value) and answered to the
// clicker alone through the action's response_url (chat.postEphemeral when that fails).
import type { Locale } from '../../core/i18n.js';
import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import { feedbackLine } from '../../core/feedback.js';
import type { Logger } from '../../ops/logger.js';
import { type AdapterDeps, runCommand } from '../common.js';
import { isSlackAdmin } from './admin.js';
import { FEEDBACK_ACTIONS, renderSlack } from './render.js';

// The buttons themselves are rendered with the rest of a reply (render.ts); their ids live there.
export { FEEDBACK_ACTIONS, FEEDBACK_BLOCK_ID, feedbackBlock } from './render.js';

/** Handles the buttons' clicks on the Bolt app. */
export function handleFeedbackActions(
  app: App,
  deps: AdapterDeps,
  track: <T>(p: Promise<T>) => Promise<T>,
  log: Logger,
  userLocale?: (client: App['client'], userId: string) => Promise<Locale | undefined>,
): void {
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: /^feedback_(up|down)$/ }, async ({ ack, body, action, respond, client }) => {
    await ack(); // within Slack's 3 s, before anything else
    const vote = action.action_id === FEEDBACK_ACTIONS.up ? 'up' : 'down';
    const user = String(body.user.id);
    const channel = (body.channel?.id ?? body.container?.channel_id) as string | undefined;
    const result = await track(
      runCommand(deps, {
        platform: 'slack',
        userId: user,
        channelId: channel,
        isAdmin: isSlackAdmin(deps.config, user),
        command: feedbackLine(vote, action.value),
        userLocale: await userLocale?.(client, user),
      }),
    );
    const msg = renderSlack(result.reply);
    const blocks = msg.blocks as KnownBlock[];
    try {
      await respond({ response_type: 'ephemeral', replace_original: false, text: msg.text, blocks });
    } catch (e) {
      log.warn({ err: (e as Error).message }, 'response_url failed for a feedback click; answering with chat.postEphemeral');
      if (channel) await client.chat.postEphemeral({ channel, user, text: msg.text, blocks });
    }
  });
}
