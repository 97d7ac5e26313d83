// The `source: prometheus` host group of the config (a list entry of `host_groups:`), and what the
// service needs from it: the client options with the credentials read from the environment.
import { z } from 'zod';
import { registerBasicAuth, registerSecret } from '../../core/secret-scrub.js';
import type { PromAuth } from './client.js';
import { DEFAULT_JOIN, LABEL_NAME, MATCH_VALUE, type JoinConfig, type PromHost } from './parse.js';

const groupOrHostName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'letters, digits, . _ - (max 63)');
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'the name of an environment variable');
const labelName = z.string().regex(LABEL_NAME, 'a Prometheus label name');

const promUrl = z
  .string()
  .max(2000)
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && !u.search && !u.hash;
    } catch {
      return false;
    }
  }, 'the server URL, http(s)://host:port[/prefix], with no credentials in it (use bearer_token_env or basic_auth)');

export const prometheusGroupSchema = z
  .object({
    name: groupOrHostName,
    source: z.literal('prometheus'),
    url: promUrl,
    // Secrets only from the environment, by name; never in the file, never printed.
    bearer_token_env: envName.optional(),
    basic_auth: z
      .object({ username: z.string().min(1).max(200), password_env: envName })
      .strict()
      .optional(),
    timeout_ms: z.number().int().min(500).max(120000).default(10000),
    /** Smallest step of a history (query_range) read; coarser when the range would pass 11,000 points. */
    history_step_s: z.number().int().min(1).max(3600).default(60),
    join: z
      .object({
        gpu_label: labelName.default(DEFAULT_JOIN.gpuLabel),
        node_label: labelName.default(DEFAULT_JOIN.nodeLabel),
        strip_port: z.boolean().default(DEFAULT_JOIN.stripPort),
      })
      .strict()
      .default({ gpu_label: DEFAULT_JOIN.gpuLabel, node_label: DEFAULT_JOIN.nodeLabel, strip_port: DEFAULT_JOIN.stripPort }),
    hosts: z
      .array(
        z
          .object({
            name: groupOrHostName,
            // The join label's value for this host (without :port when strip_port); default: its name.
            match: z.string().regex(MATCH_VALUE, 'a host name, IP address or node name as the exporters label it').optional(),
          })
          .strict(),
      )
      .min(1, 'at least one host')
      .max(4096),
  })
  .strict()
  .refine((g) => !(g.bearer_token_env && g.basic_auth), { message: 'bearer_token_env and basic_auth: choose one' });

export type PrometheusGroupConfig = z.infer<typeof prometheusGroupSchema>;

export interface PromGroupSettings {
  name: string;
  url: string;
  timeoutMs: number;
  historyStepS: number;
  auth?: PromAuth;
  join: JoinConfig;
  hosts: PromHost[];
}

/** The group's settings with its credentials read from the environment; a variable that is not set is named (its value never is). */
export function groupSettings(g: PrometheusGroupConfig, env: NodeJS.ProcessEnv = process.env): PromGroupSettings {
  let auth: PromAuth | undefined;
  if (g.bearer_token_env) {
    const token = env[g.bearer_token_env];
    if (!token) throw new Error(`host_groups.${g.name}.bearer_token_env: ${g.bearer_token_env} is not set`);
    auth = { kind: 'bearer', token };
    // Known to the scrubber from now on: a proxy echoing the header in an error never gets it shown or logged.
    registerSecret(token);
  } else if (g.basic_auth) {
    const password = env[g.basic_auth.password_env];
    if (password === undefined) throw new Error(`host_groups.${g.name}.basic_auth.password_env: ${g.basic_auth.password_env} is not set`);
    auth = { kind: 'basic', username: g.basic_auth.username, password };
    registerBasicAuth(g.basic_auth.username, password);
  }
  return {
    name: g.name,
    url: g.url,
    timeoutMs: g.timeout_ms,
    historyStepS: g.history_step_s,
    ...(auth ? { auth } : {}),
    join: { gpuLabel: g.join.gpu_label, nodeLabel: g.join.node_label, stripPort: g.join.strip_port },
    hosts: g.hosts.map((h) => ({ name: h.name, match: h.match ?? h.name })),
  };
}
