// Every chat command, one file each. The registry checks their shape at load.
import type { Command } from '../src/core/command.js';
import chart from './chart.js';
import diagnose from './diagnose.js';
import fit from './fit.js';
import digest from './digest.js';
import feedback from './feedback.js';
import help from './help.js';
import hosts from './hosts.js';
import mem from './mem.js';
import notify from './notify.js';
import status from './status.js';
import watch from './watch.js';
import whoami from './whoami.js';

// Each command has its own options type; a list of them is only expressible with `any` (Command is
// invariant in O: O is both run's parameter and the schema's output).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function allCommands(): Command<any>[] {
  return [help, diagnose, status, mem, hosts, digest, watch, chart, fit, notify, feedback, whoami];
}
