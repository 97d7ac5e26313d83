// A paste with both a memory series that grows and a CUDA OOM (issue 23): the evidence decides which
// answer comes first, not the rules' priorities. A series that climbs to the card the OOM names says the
// OOM is where the growth ended: the leak and its lever (what is kept across steps) come first. A series
// that grows far below the card did not fill it: the OOM's own figures answer first.
import type { Category } from './rule-types.js';
import type { Incident } from './incident/index.js';
import { OVER_REQUESTS } from './told-vocabulary.js';

/** Share of the card the last reading must reach for the growth to be what filled it. */
const REACHES_CARD = 0.6;

interface Ranked {
  /** The rule's id (diagnoses carry it; the host reordering reads it). */
  rule?: string;
  category: Category;
  incident: Incident;
}

const OOM_CATEGORIES = new Set<Category>(['cuda_oom', 'fragmentation', 'replica_oom']);
/** The rule that answers a climb of the card's memory told in words (knowledge/, told-hits.ts). */
const TOLD_GROWTH_RULE = 'gpu-memory-growth-reported';

/** Whether the growth series reached the card the OOM names (unknown card: the series is the evidence there is). */
export function growthReachesCard(series: readonly number[], cardMiB: number | undefined): boolean {
  if (series.length === 0) return false;
  if (cardMiB === undefined || cardMiB <= 0) return true;
  return series[series.length - 1] >= REACHES_CARD * cardMiB;
}

/** The diagnoses reordered so that the leak and the OOM come in the order the series supports; others keep their place. */
export function orderGrowthAndOom<T extends Ranked>(ranked: T[]): T[] {
  return orderHostGrowthAndKill(orderCardGrowthAndOom(ranked));
}

// The host rules that answer a climb of host RAM (knowledge/host-ram-growth-*).
const HOST_GROWTH_RULE = /^host-ram-growth-/;
const CLIMBS = new Set(['growth', 'sawtooth_rising']);

/**
 * A host kill beside a climb of host RAM that the paste shows (RSS / RAM readings that rise to the kill): the kill is where
 * the climb ended, so the leak and its lever (find what grows) come first. A flat or settled series is one big load, not a
 * climb: the kill speaks. A climb only told (workers.ts's hostGrowth) keeps the kill first: its own growth fix quotes the
 * report and already puts finding what grows first.
 */
function orderHostGrowthAndKill<T extends Ranked>(ranked: T[]): T[] {
  const leakAt = ranked.findIndex((d) => d.category === 'growing_memory_leak' && HOST_GROWTH_RULE.test(d.rule ?? ''));
  const killAt = ranked.findIndex((d) => d.category === 'host_oom_killed');
  if (leakAt === -1 || killAt === -1 || leakAt < killAt) return ranked;
  const { series, host } = ranked[leakAt].incident;
  if (series.hostSettled || !CLIMBS.has(series.hostShape ?? '') || host.hostGrowth !== undefined) return ranked;
  const out = ranked.slice();
  out[killAt] = ranked[leakAt];
  out[leakAt] = ranked[killAt];
  return out;
}

function orderCardGrowthAndOom<T extends Ranked>(ranked: T[]): T[] {
  const leakAt = ranked.findIndex((d) => d.category === 'growing_memory_leak');
  const oomAt = ranked.findIndex((d) => OOM_CATEGORIES.has(d.category));
  if (leakAt === -1 || oomAt === -1) return ranked;
  const leak = ranked[leakAt];
  const oom = ranked[oomAt];
  const series = leak.incident.series.memorySeriesMiB ?? [];
  const card = oom.incident.figures.totalCapacityMiB ?? oom.incident.card.gpuMemoryMiB ?? oom.incident.card.statedGpuMemoryMiB;
  // Growth the user reports in words (gpu-memory-growth-reported) has no readings to set against the card: it comes
  // first only as a server's climb told request after request (toldClimbFirst); otherwise the OOM's own figures speak.
  const leakFirst = series.length > 0 ? growthReachesCard(series, card) : toldClimbFirst(leak, oom, card);
  if (series.length === 0 && !leakFirst) return ranked;
  if (leakFirst === leakAt < oomAt) return ranked;
  const out = ranked.slice();
  out[leakAt] = oom;
  out[oomAt] = leak;
  return out;
}

/** A request that alone takes this share of the card is a capacity question, whatever the words say of a climb. */
const BIG_REQUEST = 0.25;

/**
 * A server's run is counted in requests: memory told to climb request after request ("gradually increases ... after
 * subsequent requests", "with each request") before a request fails is the climb ending, not one request too big, so
 * the climb comes first. Not where the OOM's single request is a quarter of the card (capacity), nor in an evaluation
 * pass (what it gathers of each batch: the eval levers answer it). A climb told over epochs or steps keeps the OOM
 * first: its own text already reads the run that fit before ("The card ran out only later"), and on the blind splits
 * that reading was as often capacity met late (a longer input, the eval pass) as a leak.
 */
function toldClimbFirst(leak: Ranked, oom: Ranked, cardMiB: number | undefined): boolean {
  if (leak.rule !== TOLD_GROWTH_RULE || !OVER_REQUESTS.test(leak.incident.series.toldClimb ?? '') || !climbOverRun(leak.incident)) return false;
  const tried = oom.incident.figures.triedAllocMiB;
  if (tried !== undefined && cardMiB !== undefined && tried >= BIG_REQUEST * cardMiB) return false;
  return oom.incident.phase.name !== 'eval';
}

/**
 * Whether the words measure a climb of the card's memory against the run, the evidence of a climb at constant work per
 * step: a climb told per step or over a count of the run, the run told to go on before the failure ("after a few
 * iterations"), or epochs that ran first ("after 21 epochs"). "My memory keeps growing" alone is no such evidence, and
 * a climb the report ties to the input's length or size ("应该是音频长度的问题") is the input, not something kept.
 */
export function climbOverRun(incident: Incident): boolean {
  if (incident.series.riseWithInput !== undefined) return false;
  return incident.series.toldClimb !== undefined || incident.progress.runToldBeforeFailure !== undefined || incident.progress.oomAfterEpochs !== undefined;
}
