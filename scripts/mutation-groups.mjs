// Mutation testing, one group of modules at a time (scripts/mutation-run.mjs; npm run test:mutation).
// Each group lists the modules it mutates and the in-process test files that exercise them, so a mutant
// runs only fast unit tests: the whole in-process suite made each mutant wait for slow files (the stored
// trace summaries, chart rendering) that never reach these modules' branches any other way, and a run
// of every module took about 6 h on two cores. What only a CLI test reached gets an in-process twin
// (test/readings/*-out-of-range.test.ts). A group's run writes reports/mutation/GROUP.json at its end
// and GROUP.progress.jsonl as it goes (scripts/mutation-summary.mjs reads both).
//
// Left out on purpose:
// - files that run bin/gpu-doctor as a child process (malformed-readings, out-of-range, fixes-cli,
//   dev-eval, ...): a child process never sees Stryker's active mutant;
// - test/watch/summary.test.ts and chart.test.ts (about 33 s and 15 s a run): they call the detector
//   over whole stored traces, which detector.test.ts, detector-findings.test.ts and eval.test.ts do in
//   a second; test/watch/store.test.ts computes findings in a worker thread, which never sees the active
//   mutant either;
// - test/diagnose/tool-cli.test.ts: its every-fixture diagnosis made each surviving mutant of the command-line
//   group wait seconds (a run on the shared machine managed 7 mutants in 7 minutes); its resumed-run and
//   parser-flag cases have variants in command-line-mutants.test.ts, which needs only knowledge/tools.yaml.
// The detector's speed is npm run bench:detector (a ratio to a linear pass), not a timed test: a time bound
// failed the initial run on a loaded machine, which stops the whole run.
export const mutationGroups = {
  arithmetic: {
    mutate: ['src/diagnose/fixes/arithmetic.ts'],
    tests: ['test/diagnose/fix-arithmetic.test.ts', 'test/diagnose/fixes.test.ts'],
  },
  'command-line': {
    mutate: ['src/diagnose/fixes/command-line.ts'],
    tests: ['test/diagnose/command-line.test.ts', 'test/diagnose/command-line-mutants.test.ts', 'test/diagnose/fixes.test.ts'],
  },
  free: {
    mutate: ['src/readings/free.ts'],
    tests: [
      'test/readings/free-layouts.test.ts',
      'test/readings/free-out-of-range.test.ts',
      'test/readings/free-mem-row.test.ts',
      'test/readings/csv-tables.test.ts',
      'test/readings/parsers.test.ts',
      'test/readings/fixtures.test.ts',
    ],
  },
  'nvidia-smi-csv': {
    mutate: ['src/readings/nvidia-smi-csv.ts'],
    tests: [
      'test/readings/csv-edges.test.ts',
      'test/readings/nvidia-smi-csv-out-of-range.test.ts',
      'test/readings/csv-tables.test.ts',
      'test/readings/parsers.test.ts',
      'test/readings/fixtures.test.ts',
      'test/readings/notes-catalogue.test.ts',
    ],
  },
  detector: {
    mutate: ['src/watch/detector.ts'],
    tests: [
      'test/watch/detector.test.ts',
      'test/watch/detector-findings.test.ts',
      'test/watch/detector-guards.test.ts',
      'test/watch/detector-mutants.test.ts',
      'test/watch/eval.test.ts',
    ],
  },
  growth: {
    mutate: ['src/watch/growth.ts'],
    tests: [
      'test/watch/growth.test.ts',
      'test/watch/growth-mutants.test.ts',
      'test/watch/detector.test.ts',
      'test/watch/detector-findings.test.ts',
      'test/watch/detector-guards.test.ts',
      'test/watch/detector-mutants.test.ts',
      'test/watch/early-alert.test.ts',
      'test/watch/eval.test.ts',
    ],
  },
  paste: {
    mutate: ['src/core/paste.ts'],
    tests: ['test/core/paste-mutants.test.ts'],
  },
  'prometheus-parse': {
    mutate: ['src/sources/prometheus/parse.ts'],
    tests: ['test/sources/prometheus-parse.test.ts', 'test/sources/prometheus-parse-mutants.test.ts', 'test/sources/prometheus-group.test.ts'],
  },
  'secret-scrub': {
    mutate: ['src/core/secret-scrub.ts'],
    tests: ['test/sources/secret-scrub.test.ts'],
  },
  redact: {
    mutate: ['src/feedback/redact.ts', 'src/feedback/secret-rules.ts'],
    tests: ['test/feedback/redact.test.ts', 'test/feedback/secret-rules-mutants.test.ts', 'test/feedback/secret-rules-shape.test.ts'],
  },
};

/** The group named by MUTATION_GROUP, or undefined when unset (then every module and test file). */
export function selectedGroup(env = process.env) {
  const name = env.MUTATION_GROUP;
  if (!name) return undefined;
  const group = mutationGroups[name];
  if (!group) throw new Error(`MUTATION_GROUP=${name}: not one of ${Object.keys(mutationGroups).join(', ')}`);
  return { name, ...group };
}
