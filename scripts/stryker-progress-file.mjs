// A Stryker reporter that appends each tested mutant to reports/mutation/GROUP.progress.jsonl as it
// is tested: Stryker writes its JSON report and incremental file only when a run ends, so a run stopped
// on a busy machine otherwise leaves nothing. scripts/mutation-summary.mjs reads this file too (the
// scores of the mutants tested so far, and the survivors' places).
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PluginKind, declareClassPlugin } from '@stryker-mutator/api/plugin';

export const progressFileName = (group) => `reports/mutation/${group ?? 'mutation'}.progress.jsonl`;

class ProgressFileReporter {
  constructor() {
    this.file = progressFileName(process.env.MUTATION_REPORT ?? process.env.MUTATION_GROUP);
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, '');
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
      static: m.static ?? false,
    };
    appendFileSync(this.file, `${JSON.stringify(line)}\n`);
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'progress-file', ProgressFileReporter)];
