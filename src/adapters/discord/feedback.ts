// 👍 / 👎 on Discord: a reply's `feedback` marker becomes a row of two buttons (custom_id `fb:up:ID`,
// `fb:down:ID`), and a click (a component interaction) is run as `/gpu feedback up|down ID` (audited
// like any command; the store looks the id up, never trusting the custom_id) and answered to the
// clicker alone (flags 64), well within Discord's 3 s.
import { ButtonStyle, ComponentType, MessageFlags, type APIActionRowComponent, type APIButtonComponent, type ButtonInteraction } from 'discord.js';
import { localeFromTag, t, type Locale } from '../../core/i18n.js';
import { feedbackLine } from '../../core/feedback.js';
import { type AdapterDeps, runCommand } from '../common.js';
import { renderDiscord } from './render.js';

const CUSTOM_ID = /^fb:(up|down):/;

/** The button row under a diagnosis. */
export function feedbackComponents(id: string, loc?: Locale): APIActionRowComponent<APIButtonComponent>[] {
  const button = (vote: 'up' | 'down', label: string, emoji: string): APIButtonComponent => ({
    type: ComponentType.Button,
    style: ButtonStyle.Secondary,
    custom_id: `fb:${vote}:${id}`,
    label,
    emoji: { name: emoji },
  });
  return [
    { type: ComponentType.ActionRow, components: [button('up', t(loc, 'feedback.button.up'), '👍'), button('down', t(loc, 'feedback.button.down'), '👎')] },
  ];
}

export const isFeedbackButton = (customId: string): boolean => CUSTOM_ID.test(customId);

/** Stores the click's vote and thanks the clicker privately. */
export async function onFeedbackButton(i: ButtonInteraction, deps: AdapterDeps, isAdmin: boolean): Promise<void> {
  const vote = i.customId.startsWith('fb:up:') ? 'up' : 'down';
  const id = i.customId.slice(`fb:${vote}:`.length);
  const result = await runCommand(deps, {
    platform: 'discord',
    userId: i.user.id,
    channelId: i.channelId,
    isAdmin,
    command: feedbackLine(vote, id),
    userLocale: localeFromTag(i.locale),
  });
  await i.reply({ embeds: renderDiscord(result.reply).embeds, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [], repliedUser: false } });
}
