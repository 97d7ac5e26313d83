// Who is an admin on Slack: a user id in the config's admins.slack (Slack has no roles the bot reads).
import type { Config } from '../../config.js';

export function isSlackAdmin(config: Config, userId: string): boolean {
  return config.admins.slack.includes(userId);
}
