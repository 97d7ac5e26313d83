// The zh replies' check for English prose that did not come from a catalogue (issue 14 §6).
/**
 * English prose left in a zh reply: runs of 4 or more English words once what is rightly English is
 * taken out: code spans and quoted log text, URLs, paths, flags, settings (key=value, key: value),
 * dotted and called names (torch.cuda.empty_cache()), rule ids (cuda-oom-fragmentation), upper-case names (CUDA_VISIBLE_DEVICES, NCCL),
 * numbers with their units, the test's own host and user names, and `names` (command and tool names). A reply string that does not come from a catalogue shows up here.
 */
export function englishRuns(text: string, names: readonly string[] = []): string[] {
  const named = names.length ? new RegExp(`(?<![\\w-])(?:${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?![\\w-])`, 'g') : /$^/;
  const stripped = text
    .replace(named, ' ')
    .replace(/\bpid\s?\d+/gi, ' ')
    .replace(/```[\s\S]*?```|`[^`\n]*`/g, ' ')
    .replace(/"[^"\n]*"|“[^”\n]*”/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/(?:^|\s)(?:\/|~\/|\.\/)\S*/g, ' ')
    .replace(/(?:^|\s)--?[A-Za-z][\w-]*(?:[= ]\S+)?/g, ' ')
    .replace(/[\w.-]+(?:=|: )\S+/g, ' ')
    .replace(/\b[\w]+(?:\.[\w]+)+(?:\([^)]*\))?|\b\w+\([^)]*\)/g, ' ')
    .replace(/\b[A-Z0-9_]{2,}\b/g, ' ')
    .replace(/\b[a-z0-9]+(?:-[a-z0-9]+){2,}\b/g, ' ')
    .replace(/\b\d[\d.,:%]*\s?(?:[KMGT]i?B|MB|GB|h|min|d|s|ms|px|B)?\b/g, ' ')
    .replace(/\b(?:gpu\d+|alice|bob|ml|UALICE|UADMIN)\b/gi, ' ')
    .replace(/[ \t]+/g, ' ');
  return [...stripped.matchAll(/[A-Za-z][A-Za-z']*(?:[ ,/-]+[A-Za-z][A-Za-z']*){3,}/g)].map((m) => m[0]);
}
