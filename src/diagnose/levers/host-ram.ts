// Host-RAM kills (issue 23): each lever needs its evidence. The phase the log shows decides: killed while the
// weights load (low_cpu_mem_usage, a quantized checkpoint), while the data is read, tokenised or mapped before
// any step (lazy loading, streaming, mmap), DataLoader workers only where the paste states a worker count above
// 0 or shows a worker killed. When none of that is in the log, the reply says so and gives the one experiment
// that decides (levers/host-ram's condition host_lever_unstated). Patterns are bounded (untrusted input, linear).
import { readWorkers, workersEvidence, type WorkersFacts } from './workers.js';
import { readEvalGathered } from './eval-gathered.js';
import type { HostPart, Incident } from '../incident/index.js';

export { workersEvidence } from './workers.js';

export type HostRamFacts = Pick<HostPart, 'workersShown' | 'spawnedChildren' | 'evalGathered' | 'evalKilled'>;

// Killed while the data was being loaded or prepared, before any step reported a loss: the progress lines
// just above the kill name data ("Load the 24000 image of 25000.", "[INFO] load 6569 train frames.", "Loaded
// 108000000 lines", a float64 array of 461851 x 5 x 5 x 244), tokenisation or a datasets map ran ("Running
// tokenizer on dataset", "Map (num_proc=8):  45%"), or the report says so ("加载数据killed").
const KILL_LINE = /^\W{0,4}(?:Killed|已杀死)\W{0,4}$|exitcode\s{0,2}:\s{0,2}-9\b|killed by signal: Killed|Out of memory: Kill/i;
const DATA_LOADING =
  /\b(?:load(?:s|ing|ed)?|read(?:ing)?|preload(?:ing)?|decod(?:e|ing))\b[^\n]{0,40}\b(?:images?|frames?|data(?:set)?|samples?|files?|features?|patches|annotations?|lines|rows|sentences|records|examples|documents|sequences)\b|--preload\s{1,3}[1-9]|加载数据|读取数据|数据加载|\bshape\s{0,2}=\s{0,2}\(\d{5,9}(?:,\s{0,2}\d{1,6}){1,5}\),\s{0,2}(?:d?type\s{0,2}=\s{0,2})?float64/i;
const DATA_PREPARING =
  /\bRunning tokenizer on\b|\bTokeniz(?:ing|ation)\b[^\n]{0,60}(?:\d{1,3}%|\d \/ ?\d)|^\s{0,4}Map(?: \(num_proc=\d{1,4}\))?:\s{0,3}\d{1,3}%/i;
const DATA_KILLED_PROSE = /(?:加载数据|读取数据|数据加载|loading (?:the )?(?:data|dataset|images))[^\n]{0,20}(?:killed|被杀|已杀死)/i;
export const TRAIN_PROGRESS = /\b(?:epoch|iter(?:ation)?s?|step)\b[^\n]{0,60}\d[^\n]{0,80}\bloss\b|\bloss\s{0,2}[=:]\s{0,2}\d/i;
const WORKER_KILLED = /DataLoader worker \(pid[^\n]{0,80}?\) (?:is killed by signal: (?:Killed|Terminated)|exited unexpectedly)/;
// A child process of the job's own pool: Python's multiprocessing runs a spawned child through spawn.py's spawn_main
// (Windows always, macOS by default) and a Pool names its children SpawnPoolWorker-N; datasets' map with num_proc
// reports a lost pool child in its own words. Each child imports the whole stack again (torch's CUDA DLLs on
// Windows) and holds its own copy of its work, so their number multiplies what the job commits.
const SPAWNED_CHILD =
  /multiprocessing[\\/]spawn\.py", line \d{1,6}, in spawn_main|\bProcess SpawnPoolWorker-\d{1,4}\b|One of the subprocesses has abruptly died during map operation/;

/** The index of the paste's last kill line (KILL_LINE), or -1. */
function lastKillLine(lines: readonly string[]): number {
  for (let i = lines.length - 1; i >= 0; i--) if (KILL_LINE.test(lines[i].slice(0, 300))) return i;
  return -1;
}

export function killedLoadingData(text: string): boolean {
  const lines = text.split('\n', 20000);
  const kill = lastKillLine(lines);
  const before = kill >= 0 ? lines.slice(0, kill) : lines;
  if (before.some((l) => TRAIN_PROGRESS.test(l.slice(0, 400)))) return false;
  if (kill < 0) return DATA_KILLED_PROSE.test(text.slice(0, 4096));
  return lines.slice(Math.max(0, kill - 12), kill).some((l) => DATA_LOADING.test(l.slice(0, 400)) || DATA_PREPARING.test(l.slice(0, 400)));
}

// Killed while the model was loading: one of the last lines before the kill announces the model load ("load model
// begin.", "Loading model models/x...", "Loading checkpoint shards:", "加载模型...") and no training step reported a
// loss before it, or the report puts the kill in from_pretrained ("from_pretrained就已经被kill").
const MODEL_LOADING =
  /\b(?:load(?:ing)?\s{1,3}(?:the\s{1,3})?(?:model|weights|checkpoint)s?|model\s{1,3}load(?:ing)?|Loading checkpoint shards|from_pretrained)\b|加载模型|模型加载/i;
const FROM_PRETRAINED_KILLED = /\bfrom_pretrained\b[^\n]{0,20}?(?:\bkilled\b|被\s{0,2}(?:kill|杀))|\bkilled\b[^\n]{0,30}?\bfrom_pretrained\b/i;

export function killedLoadingModel(text: string): boolean {
  if (FROM_PRETRAINED_KILLED.test(text.slice(0, 20_000))) return true;
  const lines = text.split('\n', 20000);
  const kill = lastKillLine(lines);
  if (kill < 0 || lines.slice(0, kill).some((l) => TRAIN_PROGRESS.test(l.slice(0, 400)))) return false;
  // The last three non-empty lines before the kill (a progress bar may sit on the kill's own line's left).
  const before = lines
    .slice(Math.max(0, kill - 6), kill + 1)
    .filter((l) => l.trim() !== '')
    .slice(-4);
  return before.some((l) => MODEL_LOADING.test(l.slice(0, 400)));
}

// A checkpoint deserialised into host RAM: torch.load told to map it to the CPU, Accelerate's load_state (it loads
// every file with map_location="cpu"), or torch.load's own frames (serialization.py) under the failure. Each process
// holds the whole state (an Adam optimizer's is twice the fp32 weights) in RAM before it reaches its device.
const CHECKPOINT_TO_HOST =
  /\btorch\.load\([^\n]{0,160}\bmap_location\s{0,2}=\s{0,2}(?:["']cpu["']|torch\.device\(\s{0,2}["']cpu["'])|\baccelerator\.load_state\(|accelerate[\\/]checkpointing\.py", line \d{1,6}, in load_accelerator_state|torch[\\/]serialization\.py", line \d{1,6}, in (?:load|_load)\b/;

/** Killed (or out of host RAM) loading a checkpoint into host memory, before any training step logged a loss. */
export function checkpointLoadedToHost(text: string): boolean {
  const head = text.slice(0, 200_000);
  if (!CHECKPOINT_TO_HOST.test(head)) return false;
  return !head.split('\n', 20000).some((l) => TRAIN_PROGRESS.test(l.slice(0, 400)));
}

/** What the paste shows of DataLoader workers beyond a stated count (read once per log). */
export function readHostRam(text: string): HostRamFacts & WorkersFacts {
  return {
    ...readWorkers(text),
    ...readEvalGathered(text),
    ...(WORKER_KILLED.test(text) ? { workersShown: true } : {}),
    ...(SPAWNED_CHILD.test(text) ? { spawnedChildren: true } : {}),
  };
}

/**
 * No host-RAM lever has evidence in the log: not the model load, not the data's preparation, not workers, a RAM
 * cache, AutoBatch, Ray's monitor or a large model's per-process copies. The reply then gives the experiment.
 */
export function hostLeverUnstated(f: Incident): boolean {
  if (f.host.killedWhileLoading || f.host.killedLoadingData || f.stack.rayMonitor !== undefined || workersEvidence(f)) return false;
  // What rose or what the failing frame keeps is evidence of its own (levers/workers.ts).
  if (f.host.hostGrowth || f.series.keptReference || f.host.loaderCollected || f.host.evalGathered || f.host.evalKilled) return false;
  if (f.host.workers === undefined && (f.model.paramsB ?? 0) >= 1) return false;
  if (f.run.cache === true || f.run.cache === 'ram' || f.run.batch === -1 || f.run.autobatch !== undefined) return false;
  return true;
}
