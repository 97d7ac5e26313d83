// The house's layering rules (issue 24 §4), written once, and the import circles among src/ files.
// Every import counts: value, type-only (`import type`, `import('…').T` in a type position),
// re-exports and dynamic import(), because a type import still ties a floor to the one above it.
// `npx tsx scripts/layering.ts` prints the report; test/layering.test.ts runs it in `npm test`.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface LayerRule {
  from: string;
  to: string;
  why: string;
}

/** Folder prefixes (relative to the repository root, '/'-separated) and the names the rules use. */
const FOLDERS: Record<string, string> = {
  Core: 'src/core/',
  Adapters: 'src/adapters/',
  Commands: 'commands/',
  Diagnose: 'src/diagnose/',
  Hosts: 'src/hosts/',
  Readings: 'src/readings/',
  Watch: 'src/watch/',
  Fleet: 'src/fleet/',
  Owners: 'src/owners/',
  Sources: 'src/sources/',
  Storage: 'src/storage/',
  Feedback: 'src/feedback/',
};

export const RULES: readonly LayerRule[] = [
  { from: 'Core', to: 'Adapters', why: 'the core knows no platform' },
  { from: 'Commands', to: 'Adapters', why: "commands don't know the platform" },
  { from: 'Diagnose', to: 'Hosts', why: 'diagnosis is pure text in, answer out' },
  { from: 'Readings', to: 'Hosts', why: 'parsers are pure' },
  { from: 'Readings', to: 'Diagnose', why: 'parsers know no rules' },
  { from: 'Diagnose', to: 'Adapters', why: 'no rendering in the engine' },
  { from: 'Hosts', to: 'Adapters', why: 'SSH knows no chat' },
  { from: 'Watch', to: 'Adapters', why: "the digest goes out through Core's Reply" },
  { from: 'Core', to: 'Diagnose', why: 'ground floor: the core knows no wing' },
  { from: 'Core', to: 'Fleet', why: 'ground floor: the core knows no wing' },
  { from: 'Core', to: 'Owners', why: 'ground floor: the core knows no wing' },
  { from: 'Core', to: 'Sources', why: 'ground floor: the core knows no wing' },
  { from: 'Core', to: 'Storage', why: 'ground floor: the core knows no wing' },
  { from: 'Core', to: 'Hosts', why: 'ground floor: the core knows no wing' },
  { from: 'Watch', to: 'Storage', why: 'store port: the watch owns its port; Postgres implements it' },
  { from: 'Feedback', to: 'Storage', why: 'store port: feedback owns its port' },
  { from: 'Hosts', to: 'Watch', why: 'hosts answer readings, not samples' },
  { from: 'Readings', to: 'Core', why: 'parsers are pure' },
  { from: 'Commands', to: 'Storage', why: 'commands reach storage only through services' },
];

/**
 * Rules still broken, each with the most imports that may break it and why it is not fixed yet: more
 * imports than that fail the check, so no new one comes in while these are moved out. Fewer imports
 * fail it too: a count is lowered (or the entry dropped) with the import that goes, so an allowance
 * left behind never lets one come back.
 */
export const KNOWN_EXCEPTIONS: Readonly<Record<string, { count: number; why: string }>> = {};

/** Import circles among src/ files that are still there (0 is the goal); more fail the check. */
export const KNOWN_CYCLES = 0;

export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface Violation {
  rule: LayerRule;
  edge: ImportEdge;
}

export interface LayeringReport {
  edges: ImportEdge[];
  violations: Violation[];
  /** Strongly connected components of more than one src/ file (or a file importing itself). */
  cycles: string[][];
  /** Problems against the known exceptions: a rule broken more or less often than known, more or fewer cycles. */
  failures: string[];
}

const SOURCE = /\.(ts|mts|tsx)$/;

/** The TypeScript sources under src/ and commands/, keyed by '/'-separated path from `root`. */
export function readSourceTree(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (relative: string): void => {
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        files.set(child, readFileSync(path.join(root, child), 'utf8'));
      }
    }
  };
  walk('src');
  walk('commands');
  return files;
}

interface Specifier {
  text: string;
  typeOnly: boolean;
}

function specifiersOf(fileName: string, text: string): Specifier[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found: Specifier[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      found.push({ text: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ text: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression)) found.push({ text: expression.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal)) {
        found.push({ text: argument.literal.text, typeOnly: true });
      }
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteralLike(argument)) found.push({ text: argument.text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A relative specifier resolved the way NodeNext resolves it for these sources ('./x.js' is './x.ts'). */
function resolve(importer: string, specifier: string, files: ReadonlyMap<string, string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(importer), specifier));
  const candidates = [target];
  const extension = /\.(m?js|jsx)$/.exec(target);
  if (extension) {
    const stem = target.slice(0, -extension[0].length);
    candidates.push(`${stem}.ts`, `${stem}.mts`, `${stem}.tsx`);
  } else {
    candidates.push(`${target}.ts`, `${target}/index.ts`);
  }
  const found = candidates.find((candidate) => files.has(candidate));
  // A file outside src/ and commands/ (locales/*.json) is kept as a path so a rule on it could apply.
  return found ?? target;
}

function folderOf(file: string): string | undefined {
  return Object.entries(FOLDERS).find(([, prefix]) => file.startsWith(prefix))?.[0];
}

export function importEdges(files: ReadonlyMap<string, string>): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const [file, text] of files) {
    for (const specifier of specifiersOf(file, text)) {
      const to = resolve(file, specifier.text, files);
      if (to !== undefined) edges.push({ from: file, to, typeOnly: specifier.typeOnly });
    }
  }
  return edges;
}

/** Tarjan's strongly connected components over the src/ files; iterative, so depth is no limit. */
export function importCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const edge of edges) {
    if (!edge.from.startsWith('src/') || !edge.to.startsWith('src/')) continue;
    if (!next.has(edge.from)) next.set(edge.from, new Set());
    if (!next.has(edge.to)) next.set(edge.to, new Set());
    next.get(edge.from)!.add(edge.to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of [...next.keys()].sort()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; children: Iterator<string> }> = [];
    const enter = (node: string): void => {
      index.set(node, counter);
      low.set(node, counter);
      counter += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, children: [...next.get(node)!].sort()[Symbol.iterator]() });
    };
    enter(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const step = frame.children.next();
      if (!step.done) {
        const child = step.value;
        if (!index.has(child)) enter(child);
        else if (onStack.has(child)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1 || next.get(frame.node)!.has(frame.node)) components.push(component.sort());
      }
    }
  }
  return components;
}

const edgeKey = (edge: ImportEdge): string => `${edge.from} -> ${edge.to}`;

export function checkLayering(
  files: ReadonlyMap<string, string>,
  known: { exceptions: Readonly<Record<string, { count: number }>>; cycles: number } = { exceptions: KNOWN_EXCEPTIONS, cycles: KNOWN_CYCLES },
): LayeringReport {
  const edges = importEdges(files);
  const violations: Violation[] = [];
  for (const edge of edges) {
    const from = folderOf(edge.from);
    const to = folderOf(edge.to);
    for (const rule of RULES) {
      if (rule.from === from && rule.to === to) violations.push({ rule, edge });
    }
  }
  const cycles = importCycles(edges);
  const failures: string[] = [];
  for (const rule of RULES) {
    const key = `${rule.from}->${rule.to}`;
    const broken = violations.filter((violation) => violation.rule === rule);
    const allowed = known.exceptions[key]?.count ?? 0;
    if (broken.length > allowed) {
      const lines = broken.map(({ edge }) => `  ${edgeKey(edge)}${edge.typeOnly ? ' (type-only)' : ''}`).join('\n');
      failures.push(
        `${rule.from} (${FOLDERS[rule.from]}) never imports ${rule.to} (${FOLDERS[rule.to]}): ${rule.why}; ${broken.length} import${broken.length === 1 ? '' : 's'}${allowed ? ` (known: ${allowed})` : ''}:\n${lines}`,
      );
    } else if (broken.length < allowed) failures.push(`${key}: ${broken.length} imports, KNOWN_EXCEPTIONS allows ${allowed}: lower it`);
  }
  if (cycles.length > known.cycles) {
    failures.push(`${cycles.length} import circles among src/ files (known: ${known.cycles}):\n${cycles.map((cycle) => `  ${cycle.join(', ')}`).join('\n')}`);
  }
  if (cycles.length < known.cycles) failures.push(`${cycles.length} import circles, KNOWN_CYCLES allows ${known.cycles}: lower it`);
  return { edges, violations, cycles, failures };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const report = checkLayering(readSourceTree(root));
  const broken = new Set(report.violations.map((violation) => `${violation.rule.from}->${violation.rule.to}`));
  console.log(`${report.edges.length} imports, ${RULES.length} rules, ${RULES.length - broken.size} hold`);
  console.log(`${report.violations.length} violations, ${report.cycles.length} import circles`);
  for (const violation of report.violations) {
    console.log(`  ${violation.rule.from} -> ${violation.rule.to}: ${edgeKey(violation.edge)}${violation.edge.typeOnly ? ' (type)' : ''}`);
  }
  for (const cycle of report.cycles) console.log(`  circle of ${cycle.length}: ${cycle.join(', ')}`);
  for (const failure of report.failures) console.error(failure);
  process.exitCode = report.failures.length > 0 ? 1 : 0;
}
