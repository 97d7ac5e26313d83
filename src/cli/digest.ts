// `gpu-doctor digest --samples FILE [--json]`: leak findings from recorded samples (JSON lines, one
// sample per line: process, GPU-level or host RAM samples as src/watch/types.ts documents).
import { localeFromEnv } from '../core/i18n.js';
import { createReadStream } from 'node:fs';
import { FileRefused, openRegularFile } from '../core/regular-file.js';
import { createInterface } from 'node:readline';
import { loadRuleBase } from '../diagnose/rule-base.js';
import { renderText } from '../adapters/console/render.js';
import { digestReply, findingsJson } from '../watch/digest.js';
import { recordedFindings } from '../watch/findings.js';
import { isProcessSample, type Sample } from '../watch/types.js';
import { parseArgs, UsageError } from './usage.js';
import { terminalSafeJson } from './json.js';

function checkSample(v: unknown, line: number): Sample {
  const s = v as Record<string, unknown>;
  if (!s || typeof s !== 'object' || Array.isArray(s)) throw new UsageError(`line ${line}: not a JSON object`);
  if (typeof s.host !== 'string' || (typeof s.ts !== 'string' && typeof s.ts !== 'number'))
    throw new UsageError(`line ${line}: a sample needs "ts" and "host"`);
  if (typeof s.ts === 'string' && Number.isNaN(Date.parse(s.ts))) throw new UsageError(`line ${line}: bad "ts"`);
  if (s.kind === 'host') {
    if (typeof s.memTotalBytes !== 'number' || typeof s.memAvailableBytes !== 'number')
      throw new UsageError(`line ${line}: a host sample needs memTotalBytes and memAvailableBytes`);
  } else if (typeof s.gpu !== 'number' || typeof s.gpuTotalMiB !== 'number' || typeof s.gpuUsedMiB !== 'number') {
    throw new UsageError(`line ${line}: a GPU sample needs gpu, gpuTotalMiB and gpuUsedMiB`);
  }
  if (s.pid !== undefined && s.pid !== null) {
    if (typeof s.pid !== 'number') throw new UsageError(`line ${line}: "pid" must be a number`);
    s.user ??= '?';
    s.command ??= '';
    s.processStart ??= s.ts;
    if (s.processMiB === undefined) s.processMiB = null;
  } else delete s.pid;
  if (s.kind !== 'host' && s.utilizationPct === undefined) s.utilizationPct = null;
  return s as unknown as Sample;
}

export async function digestCli(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { booleans: ['json'], values: ['samples'] });
  if (positionals.length) throw new UsageError('digest takes no positional arguments (use --samples FILE)');
  const file = flags.samples;
  if (typeof file !== 'string' || !file) throw new UsageError('digest needs --samples FILE');
  let fd: number | null = null;
  try {
    // A regular file, checked on the descriptor it is read from (a FIFO or /dev/zero is refused at once).
    if (file !== '-') fd = openRegularFile(file);
  } catch (e) {
    if (e instanceof FileRefused) throw new UsageError(e.message);
    throw e;
  }
  const detector = recordedFindings({ includeEnded: false });
  const hosts = new Set<string>();
  const procs = new Set<string>();
  const input = fd === null ? process.stdin : createReadStream('', { fd });
  let n = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    n++;
    if (!line.trim()) continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new UsageError(`line ${n}: not valid JSON`);
    }
    const s = checkSample(v, n);
    hosts.add(s.host);
    if (isProcessSample(s)) procs.add(`${s.host}|${s.pid}|${String(s.processStart)}`);
    detector.add(s);
  }
  const rules = await loadRuleBase();
  const findings = detector.findings();
  if (flags.json) process.stdout.write(terminalSafeJson(findingsJson(findings, rules)) + '\n');
  else
    process.stdout.write(
      renderText(digestReply(findings, { hosts: hosts.size, processes: procs.size }, rules, undefined, undefined, {}, localeFromEnv())) + '\n',
    );
  return 0;
}
