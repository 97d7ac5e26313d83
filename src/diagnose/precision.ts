// The dtype a model is loaded in, inferred from the allocation that failed (issue 23): while weights
// load, PyTorch allocates one matrix at a time, so a request equal to rows × cols × 4 bytes of a known
// layer (knowledge/weight-shapes.json) says fp32, i.e. a load without torch_dtype. 896 MiB is
// 28672 × 8192 × 4: one MLP matrix of a Llama-70B in fp32.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../core/paths.js';
import type { Incident } from './incident/index.js';

interface Family {
  name: string;
  hidden: number;
  intermediate: number;
  vocab: number;
}

interface Matrix {
  rows: number;
  cols: number;
  family: string;
}

let matrices: Matrix[] | undefined;

/** Every weight matrix shape the families define: attention (hidden²), MLP (intermediate × hidden), embeddings (vocab × hidden). */
export function knownMatrices(file = join(PROJECT_ROOT, 'knowledge', 'weight-shapes.json')): Matrix[] {
  if (matrices) return matrices;
  const families = (JSON.parse(readFileSync(file, 'utf8')) as { families: Family[] }).families;
  matrices = families.flatMap((f) => [
    { rows: f.hidden, cols: f.hidden, family: f.name },
    { rows: f.intermediate, cols: f.hidden, family: f.name },
    { rows: f.vocab, cols: f.hidden, family: f.name },
  ]);
  return matrices;
}

const MiB = 2 ** 20;
/** PyTorch prints the request with two decimals in MiB (GiB above 1024 MiB: 0.01 GiB). */
const tolerance = (mib: number) => (mib >= 1024 ? 5.2 : 0.006);

/** The request is exactly one known weight matrix in half precision. */
export function halfMatrixOf(triedMiB: number, shapes: Matrix[] = knownMatrices()): boolean {
  return shapes.some((m) => Math.abs((m.rows * m.cols * 2) / MiB - triedMiB) <= tolerance(triedMiB));
}

/**
 * "28672 × 8192 × 4 bytes (Llama-2-70B)" when `triedMiB` is exactly one known matrix in fp32 and no
 * known matrix in half precision; otherwise undefined (the size is no evidence of a dtype).
 */
export function fp32MatrixOf(triedMiB: number, shapes: Matrix[] = knownMatrices()): string | undefined {
  const near = (bytes: number) => Math.abs(bytes / MiB - triedMiB) <= tolerance(triedMiB);
  if (shapes.some((m) => near(m.rows * m.cols * 2))) return undefined;
  const hit = shapes.find((m) => near(m.rows * m.cols * 4));
  return hit && `${hit.rows} × ${hit.cols} × 4 bytes (${hit.family})`;
}

/**
 * A load that failed on one fp32 weight matrix, with no dtype stated: the weights are fp32. Also when the
 * paste has no frames at all (a report that quotes the error and its code) and shows no training: a
 * request of exactly one known weight matrix is a weight being placed, not an activation.
 */
export function inferLoadDtype(incident: Incident): void {
  // transformers' float32 default read from the load call (levers/load-default-dtype.ts) yields to the failed request.
  const byDefault = incident.model.dtypeDefaultOf !== undefined;
  if ((incident.model.dtype !== undefined && !byDefault) || incident.figures.triedAllocMiB === undefined) return;
  const loading = incident.phase.name === 'load' || (incident.phase.name === undefined && incident.phase.oomPhase === 'load');
  const unframed = incident.phase.name === undefined && incident.phase.oomPhase === undefined && !incident.run.training;
  if (!loading && !unframed) return;
  const matrix = fp32MatrixOf(incident.figures.triedAllocMiB);
  // A request of one known matrix in half precision says the weights are not float32, whatever the call's default.
  if (byDefault && !matrix && halfMatrixOf(incident.figures.triedAllocMiB)) [incident.model.dtype, incident.model.dtypeDefaultOf] = [undefined, undefined];
  if (!matrix) return;
  // A matrix of another model's size than the one the paste names is a coincidence of sizes: the call's default stands.
  const familyB = Number(/(\d{1,4}(?:\.\d{1,2})?)B\b/.exec(matrix)?.[1]);
  const paramsB = incident.model.paramsB;
  if (byDefault && paramsB !== undefined && familyB > 0 && Math.abs(familyB - paramsB) > 0.25 * paramsB) return;
  incident.model.dtypeDefaultOf = undefined;
  incident.model.dtype = 'fp32';
  incident.model.dtypeEvidence = matrix;
}
