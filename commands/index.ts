// Every chat command, one file each. The registry checks their shape at load.
import chart from './chart.js';
import diagnose from './diagnose.js';
import fit from './fit.js';
import digest from './digest.js';
import feedback from './feedback.js';
import help from './help.js';
import hosts from './hosts.js';
import mem from './mem.js';
import notify from './notify.js';
import silence from './silence.js';
import status from './status.js';
import watch from './watch.js';
import whoami from './whoami.js';
import type { AnyCommand } from '../src/core/registry.js';

export function allCommands(): AnyCommand[] {
  return [help, diagnose, status, mem, hosts, digest, watch, chart, fit, notify, silence, feedback, whoami];
}
