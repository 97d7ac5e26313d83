// A Stryker reporter that appends each tested mutant to reports/mutation/GROUP.progress.jsonl as it
// is tested: Stryker writes its JSON report and incremental file only when a run ends, so a run stopped
// on a busy machine otherwise leaves nothing. scripts/mutation-summary.mjs reads this file too (the
// scores of the mutants tested so far, and the survivors' places). A run that ends writes an end line
// ({"end":true}), so a file without one at its end is a run stopped partway. MUTATION_PROGRESS_APPEND names
// a group's progress file to append to instead (npm run test:mutation -- --resume GROUP: the rest of a
// stopped run, or its survivors again once tests were added; the summary keeps each mutant's latest result).
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PluginKind, declareClassPlugin } from '@stryker-mutator/api/plugin';

export const progressFileName = (group) => `reports/mutation/${group ?? 'mutation'}.progress.jsonl`;

class ProgressFileReporter {
  constructor() {
    const append = process.env.MUTATION_PROGRESS_APPEND;
    this.file = append || progressFileName(process.env.MUTATION_REPORT ?? process.env.MUTATION_GROUP);
    mkdirSync(dirname(this.file), { recursive: true });
    if (!append) writeFileSync(this.file, '');
  }

  onMutationTestReportReady() {
    appendFileSync(this.file, `${JSON.stringify({ end: true })}\n`);
  }

  onMutantTested(m) {
    const line = {
      id: m.id,
      fileName: m.fileName,
      status: m.status,
      mutatorName: m.mutatorName,
      replacement: m.replacement,
      line: m.location.start.line,
      column: m.location.start.column,
      endLine: m.location.end.line,
      endColumn: m.location.end.column,
      static: m.static ?? false,
    };
    appendFileSync(this.file, `${JSON.stringify(line)}\n`);
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'progress-file', ProgressFileReporter)];
