// Slack's descriptor for the adapters' registry (src/adapters/index.ts): turned on by SLACK_BOT_TOKEN,
// Socket Mode with SLACK_APP_TOKEN, else HTTP mode with SLACK_SIGNING_SECRET.
import { describeAdapter } from '../platform-adapter.js';
import { isSlackAdmin } from './admin.js';
import { slackEnvFrom, slackEnvPart } from './env.js';

export const slackAdapter = describeAdapter({
  name: 'slack',
  env: { ...slackEnvPart, secrets: ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET'] },
  token: 'SLACK_BOT_TOKEN',
  howToSet: 'SLACK_BOT_TOKEN with SLACK_APP_TOKEN (or SLACK_SIGNING_SECRET) for Slack',
  settingsFrom: slackEnvFrom,
  modeOf: (slack) =>
    slack.appToken
      ? { mode: 'Slack Socket Mode', why: 'SLACK_BOT_TOKEN and SLACK_APP_TOKEN are set' }
      : {
          mode: `Slack HTTP mode (port ${slack.port ?? 3000}, /slack/events)`,
          why: 'SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are set, SLACK_APP_TOKEN is not',
        },
  isAdmin: (config, userId) => isSlackAdmin(config, userId),
  async start(deps, env) {
    const { createSlackAdapter } = await import('./app.js');
    const slack = createSlackAdapter({ ...deps, env });
    await slack.start();
    return {
      label: `slack (${slack.mode})`,
      port: slack.port(),
      stop: () => slack.stop(),
      postToChannel: (channel, reply) => slack.postToChannel(channel, reply),
      // chat.postMessage to a user id posts in the bot's DM with them.
      postToUser: (userId, reply) => slack.postToChannel(userId, reply),
    };
  },
});
