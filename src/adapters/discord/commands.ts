// The /gpu application command as Discord registers it, and the mapping from an interaction's
// options back to the same command line every other adapter dispatches.
export const HOSTS_ACTIONS = ['list', 'add', 'remove', 'test', 'trust'] as const;

const STRING = 3;
const ATTACHMENT = 11;
const SUB = 1;

export const gpuCommand = {
  name: 'gpu',
  description: 'gpu-doctor: GPU status, host memory, hosts, log diagnosis',
  dm_permission: true,
  options: [
    { type: SUB, name: 'status', description: 'Who holds which GPU, per host', options: [{ type: STRING, name: 'host', description: 'Host name (default: all)', required: false }] },
    { type: SUB, name: 'mem', description: 'Host RAM and swap', options: [{ type: STRING, name: 'host', description: 'Host name (default: all)', required: false }] },
    {
      type: SUB,
      name: 'hosts',
      description: 'List, add, remove, test or trust hosts (changes need an admin)',
      options: [
        { type: STRING, name: 'action', description: 'What to do', required: true, choices: HOSTS_ACTIONS.map((a) => ({ name: a, value: a })) },
        { type: STRING, name: 'name', description: 'Host name', required: false },
        { type: STRING, name: 'target', description: 'user@host:port (for add)', required: false },
        { type: STRING, name: 'key', description: 'Identity file path on the bot host (for add)', required: false },
      ],
    },
    {
      type: SUB,
      name: 'diagnose',
      description: 'Diagnose a training log or traceback',
      options: [
        { type: STRING, name: 'text', description: 'Pasted log text', required: false },
        { type: ATTACHMENT, name: 'file', description: 'A .log or .txt file', required: false },
      ],
    },
    { type: SUB, name: 'help', description: 'What gpu-doctor can do' },
  ],
} as const;

/** Quotes a value for the command-line tokenizer (no shell is ever involved). */
const q = (v: string) => (/[\s"']/.test(v) ? `"${v.replace(/"/g, '')}"` : v);

export function interactionLine(sub: string, get: (name: string) => string | null): string {
  switch (sub) {
    case 'status':
    case 'mem': {
      const host = get('host');
      return `/gpu ${sub}${host ? ' ' + q(host) : ''}`;
    }
    case 'hosts': {
      const parts = ['/gpu hosts', q(get('action') ?? 'list')];
      for (const k of ['name', 'target']) {
        const v = get(k);
        if (v) parts.push(q(v));
      }
      const key = get('key');
      if (key) parts.push('--key', q(key));
      return parts.join(' ');
    }
    case 'diagnose':
      return `/gpu diagnose ${get('text') ?? ''}`;
    default:
      return `/gpu ${sub}`;
  }
}
