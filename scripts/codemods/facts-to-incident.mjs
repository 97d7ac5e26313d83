#!/usr/bin/env node
// Codemod (issue 23): replaces the flat `Facts` blackboard of src/diagnose with typed parts of an `Incident`
// (src/diagnose/incident/<part>.ts). Deterministic and meant to be re-run on a tree that still declares
// `Facts`: `node scripts/codemods/facts-to-incident.mjs [root]` (root defaults to the current directory).
//
// It works from the type checker, not from text: a property access is rewritten only when its receiver is a
// `Facts` (or `Partial<Facts>`) and the property is one of Facts' fields; object literals typed as Facts,
// `Object.assign` onto one, destructuring of one and `Facts`/`Partial<Facts>`/`Pick<Facts, …>`/`Facts['x']`
// types follow; variables, parameters and properties named `facts` that hold one become `incident`.
// The few places that treat the blackboard as a dictionary are rewritten first by PRE_EDITS (exact snippets:
// a snippet that no longer matches stops the run with its file). A Facts field that PARTS does not place
// (one added since) stops the run with its name, so the map is completed rather than a field skipped.
// Rule templates and the JSON contract keep the flat names: incident/index.ts's flatView() gives them.
import ts from 'typescript';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? '.');
const DIAGNOSE = path.join(root, 'src/diagnose');
const FACTS_FILE = path.join(DIAGNOSE, 'facts.ts');
const INCIDENT_DIR = path.join(DIAGNOSE, 'incident');

// ---------------------------------------------------------------------------------------------------------
// The field -> part map (data). Order inside a part is the order of the generated interface.
// ---------------------------------------------------------------------------------------------------------
const PARTS = {
  figures: {
    type: 'FiguresPart',
    doc: "The OOM message's own figures (the last OOM message in the log; XLA's HBM report; vLLM's start-up check), in MiB.",
    fields:
      'triedAllocMiB totalCapacityMiB freeMiB allocatedMiB reservedMiB reservedUnallocatedMiB cachedMiB thisProcessMiB runtimeOom startupFreeMiB xlaUsedMiB xlaArgumentsMiB xlaProgramMiB gpuIndex',
  },
  processes: {
    type: 'ProcessesPart',
    doc: 'Other processes on the card, and ranks of one job that hold a context on one shared GPU.',
    fields: 'otherProcesses strayContextGpu strayContextPids strayContextMiB',
  },
  run: {
    type: 'RunPart',
    doc: "The tool that wrote the log and the run's settings (command line, trainer dumps, argparse, TrainingArguments).",
    fields:
      'commandLine tool toolName toolKnobs inference batch autobatch batchDefaultOf batchFromShape batchArg batchFlag imgsz cache singleCls resume amp ampHow ampDefaultOn accumulate epochs weightsSplitHow training adapterTraining',
  },
  model: {
    type: 'ModelPart',
    doc: 'The model: its name, size and the dtype its weights load in, with the evidence for an inferred dtype.',
    fields: 'model:name paramsB dtype dtypeEvidence dtypeWhy',
  },
  card: {
    type: 'CardPart',
    doc: "The card as the log names or states it (the OOM message's capacity is in figures).",
    fields: 'gpuName gpuMemoryMiB statedGpuMemoryMiB gpuModelMemoryMiB',
  },
  host: {
    type: 'HostPart',
    doc: 'Host RAM, the DataLoader workers that take it, and what the paste shows of a host-RAM kill: loading, data preparation, the RAM cache.',
    fields:
      'hostRamGiB workers killedWhileLoading killedLoadingData cacheProgressPct workersShown hostGrowth hostGrowthCjk loaderCollected workersTried workersSetTo workerExitNoKill',
  },
  phase: {
    type: 'PhasePart',
    doc: 'Where the run was when it failed (src/diagnose/phase.ts, holder-phase.ts), from frames and log lines.',
    fields: 'phase:name phaseFrame oomPhase evalLoop gathersPredictions generating deepspeedPhase shardsLoadedPct',
  },
  eval: {
    type: 'EvalPart',
    doc: "The evaluation's own settings and what its frames showed (levers/eval.ts).",
    fields:
      'evalGenerates evalCollects evalKeras evalBatch evalBatchSetting evalBatchNext evalAccumulation evalRequestShare noGradShown gradsOnStated evalWholeSet evalBatchOne',
  },
  progress: {
    type: 'ProgressPart',
    doc: 'How far training got before the failure (levers/progress.ts).',
    fields: 'stepsDone epochsDone progressLine oomAfterEpochs',
  },
  sequence: {
    type: 'SequencePart',
    doc: 'The sequence length the paste states (levers/sequence.ts).',
    fields: 'seqLen seqLenSetting seqLenNext',
  },
  input: {
    type: 'InputPart',
    doc: 'The size of one input the paste states (levers/input-size.ts).',
    fields: 'inputPixels inputSizeSetting inputSizeNext',
  },
  series: {
    type: 'SeriesPart',
    doc: 'Memory over time as the paste prints it, its trend, and what growing memory keeps.',
    fields: 'memorySeriesMiB memoryShape memoryGrowsAt keptReference emptiesCache',
  },
  holder: {
    type: 'HolderPart',
    doc: 'Who holds the GPU memory (src/diagnose/holder.ts) and the arithmetic that says so.',
    fields: 'holder:verdict holderWhy:why',
  },
  environment: {
    type: 'EnvironmentPart',
    doc: 'Where the job runs and its allocator settings (environment.ts, alloc-conf.ts).',
    fields: 'environment:detected expandableWhy allocConfName torchVersion expandableAlreadySet',
  },
  budget: {
    type: 'BudgetPart',
    doc: 'The memory budget against the card, as the reply quotes it (levers.ts, levers/budget.ts).',
    fields: 'staticWhy staticShareWhy budgetWhy',
  },
  distributed: {
    type: 'DistributedPart',
    doc: 'Distributed training: ZeRO, ranks, NCCL, rendezvous, DDP reducer errors.',
    fields:
      'zeroStage worldSize zeroOffload zeroRanksWhy ncclTimeoutMs ncclSeqByRank rendezvousFinding lostRankFinding ddpMarkedTwice ddpFindUnusedSet ddpParameter',
  },
  stack: {
    type: 'StackPart',
    doc: "Figures in a non-PyTorch stack's own format: vLLM, TF/XLA's BFC allocator, llama.cpp/ggml, TGI, Ray (stack-figures.ts).",
    fields:
      'maxModelLen kvCacheTokens vllmProfile vllmBudget vllmWeights vllmPeak vllmNonTorch vllmKv vllmUtilNeeded vllmGpuBlocks vllmUtil bfcAllocator bfcLimitMiB bfcInUseMiB bfcMaxInUseMiB ggmlGpuWeightsMiB ggmlBuffer ggmlCudaAskMiB ggmlCudaPurpose ggmlCtx ggmlCtxStated ggmlLayers prefillTokens prefillTokensHalf rayMonitor',
  },
  shm: {
    type: 'ShmPart',
    doc: 'Who ran out of /dev/shm and how (levers/shm.ts).',
    fields: 'shmWriter shmSegment shmDisableIgnored',
  },
  tried: {
    type: 'TriedPart',
    doc: 'What the user says they already tried.',
    fields: 'batchChangeNoHelp',
  },
};

/** flat name -> { part, name } */
const FIELD = new Map();
for (const [part, spec] of Object.entries(PARTS)) {
  for (const entry of spec.fields.split(/\s+/)) {
    const [flat, name = flat] = entry.split(':');
    if (FIELD.has(flat)) throw new Error(`PARTS places ${flat} twice`);
    FIELD.set(flat, { part, name });
  }
}
const at = (flat) => FIELD.get(flat);
const HELPERS = ['newIncident', 'incidentOf', 'mergeInto', 'fillMissing', 'pruneUndefined', 'hasAnyFact', 'flatView'];
const TYPES = ['Incident', 'IncidentPatch', ...Object.values(PARTS).map((p) => p.type)];

// ---------------------------------------------------------------------------------------------------------
// Pre-edits: the places that use the blackboard as a dictionary, rewritten to the incident's helpers.
// ---------------------------------------------------------------------------------------------------------
const PRE_EDITS = [
  ['src/diagnose/fixes/index.ts', '(e.facts as Record<string, unknown>)[key]', 'flatView(e.facts)[key]'],
  ['src/diagnose/reply.ts', '(best.facts as Record<string, unknown>)[k] !== undefined', 'flatView(best.facts)[k] !== undefined'],
  ['src/diagnose/reply.ts', 'fmt((best.facts as Record<string, unknown>)[k] as never)', 'fmt(flatView(best.facts)[k] as never)'],
  ['src/diagnose/contract.ts', 'facts: d.facts,', 'facts: flatView(d.facts),'],
  ['src/diagnose/settings.ts', 'for (const k of Object.keys(facts) as (keyof Facts)[]) if (facts[k] === undefined) delete facts[k];', 'pruneUndefined(facts);'],
  [
    'src/diagnose/stack-figures.ts',
    `  for (const [k, v] of Object.entries(stack)) {
    const key = k as keyof Facts;
    if (facts[key] === undefined) (facts as Record<string, unknown>)[key] = v;
  }`,
    '  fillMissing(facts, stack);',
  ],
  ['src/diagnose/facts.ts', 'const OOM_FIELDS: [keyof Facts, RegExp][] = [', 'const OOM_FIELDS: [keyof FiguresPart, RegExp][] = ['],
  ['src/diagnose/facts.ts', 'if (facts[key] !== undefined) continue;', 'if (facts.figures[key] !== undefined) continue;'],
  ['src/diagnose/facts.ts', "if (typeof v === 'number') (facts as Record<string, unknown>)[key] = v;", "if (typeof v === 'number') facts.figures[key] = v;"],
  ['src/diagnose/facts.ts', 'if (Object.keys(facts).length > 0) {', 'if (hasAnyFact(facts)) {'],
  ['src/diagnose/facts.ts', 'if (Object.keys(facts).length === 0 && lastOom !== undefined) {', 'if (!hasAnyFact(facts) && lastOom !== undefined) {'],
  [
    'src/diagnose/facts.ts',
    "if (typeof v === 'number') facts.figures[key] = v;",
    "if (typeof v === 'number') (facts.figures as Record<string, number>)[key] = v;",
  ],
  [
    'src/diagnose/diagnose.ts',
    'extractSettings(text, { commandLine: !isFlattened(raw) }) : {};',
    'extractSettings(text, { commandLine: !isFlattened(raw) }) : ({} as Facts);',
  ],
  ['src/diagnose/fixes/index.ts', 'smallerBatch(batch, facts)', 'smallerBatch(batch, facts.figures)'],
  [
    'test/diagnose/growth-oom.test.ts',
    "import { readFileSync } from 'node:fs';",
    "import { readFileSync } from 'node:fs';\nimport type { Facts } from '../../src/diagnose/facts.js';",
  ],
  ['test/diagnose/growth-oom.test.ts', 'facts: { memorySeriesMiB: [1000, 2000] } }', 'incident: { memorySeriesMiB: [1000, 2000] } as Facts }'],
  ['test/diagnose/growth-oom.test.ts', 'facts: { totalCapacityMiB: 81920 } }', 'incident: { totalCapacityMiB: 81920 } as Facts }'],
  ['test/diagnose/growth-oom.test.ts', 'facts: {} }', 'incident: {} as Facts }'],
  ['test/diagnose/growth-oom.test.ts', 'facts: { memorySeriesMiB: [40000, 80000] } }', 'incident: { memorySeriesMiB: [40000, 80000] } as Facts }'],
  [
    'src/diagnose/phase.ts',
    `  // The facts (facts.ts's Facts) as far as a phase fills them: facts.ts imports this file.
  facts: {
    phase?: Phase;
    phaseFrame?: string;
    evalLoop?: PhaseVerdict['evalLoop'];
    gathersPredictions?: boolean;
    evalGenerates?: boolean;
    evalCollects?: boolean;
    evalKeras?: boolean;
    gradsOnStated?: string;
    evalWholeSet?: boolean;
    evalBatchOne?: boolean;
  },
  verdict: PhaseVerdict | undefined,
): void {
  if (!verdict) return;
  facts.phase = verdict.phase;
  facts.phaseFrame = verdict.frame;
  if (verdict.evalLoop) facts.evalLoop = verdict.evalLoop;
  if (verdict.gathersPredictions) facts.gathersPredictions = true;
  if (verdict.evalGenerates) facts.evalGenerates = true;
  if (verdict.evalCollects) facts.evalCollects = true;
  if (verdict.evalKeras) facts.evalKeras = true;
  if (verdict.gradsOnStated) facts.gradsOnStated = verdict.gradsOnStated;
  if (verdict.evalWholeSet) facts.evalWholeSet = true;
  if (verdict.evalBatchOne) facts.evalBatchOne = true;
}`,
    `  // The incident's phase and evaluation parts as a phase fills them (structurally: the incident's part modules import this file).
  incident: {
    phase: { name?: Phase; phaseFrame?: string; evalLoop?: PhaseVerdict['evalLoop']; gathersPredictions?: boolean };
    eval: { evalGenerates?: boolean; evalCollects?: boolean; evalKeras?: boolean; gradsOnStated?: string; evalWholeSet?: boolean; evalBatchOne?: boolean };
  },
  verdict: PhaseVerdict | undefined,
): void {
  if (!verdict) return;
  incident.phase.name = verdict.phase;
  incident.phase.phaseFrame = verdict.frame;
  if (verdict.evalLoop) incident.phase.evalLoop = verdict.evalLoop;
  if (verdict.gathersPredictions) incident.phase.gathersPredictions = true;
  if (verdict.evalGenerates) incident.eval.evalGenerates = true;
  if (verdict.evalCollects) incident.eval.evalCollects = true;
  if (verdict.evalKeras) incident.eval.evalKeras = true;
  if (verdict.gradsOnStated) incident.eval.gradsOnStated = verdict.gradsOnStated;
  if (verdict.evalWholeSet) incident.eval.evalWholeSet = true;
  if (verdict.evalBatchOne) incident.eval.evalBatchOne = true;
}`,
  ],
];

/** Pre-edited texts, read by the program in place of the files (nothing is written until every check passed). */
const overlay = new Map();

function preEdit() {
  const missing = [];
  const byFile = overlay;
  for (const [file, from, to] of PRE_EDITS) {
    const abs = path.join(root, file);
    let text = byFile.get(abs) ?? fs.readFileSync(abs, 'utf8');
    const n = text.split(from).length - 1;
    if (n !== 1) {
      missing.push(`${file}: ${n} matches of ${JSON.stringify(from.slice(0, 80))}`);
      continue;
    }
    text = text.replace(from, () => to);
    byFile.set(abs, text);
  }
  if (missing.length) throw new Error('pre-edits that no longer match (update PRE_EDITS):\n  ' + missing.join('\n  '));
}

// ---------------------------------------------------------------------------------------------------------
// The program and the Facts type.
// ---------------------------------------------------------------------------------------------------------
function loadProgram() {
  const cfg = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  const host = ts.createCompilerHost(cfg.options);
  const readFile = host.readFile.bind(host);
  host.readFile = (f) => overlay.get(path.resolve(f)) ?? readFile(f);
  const program = ts.createProgram(cfg.fileNames, cfg.options, host);
  return { program, checker: program.getTypeChecker(), options: cfg.options, fileNames: cfg.fileNames };
}

const rel = (file) => path.relative(root, file);
const where = (node) => {
  const sf = node.getSourceFile();
  const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
  return `${rel(sf.fileName)}:${line + 1}`;
};

function importPath(fromFile, toFile) {
  let p = path.relative(path.dirname(fromFile), toFile).replace(/\\/g, '/').replace(/\.ts$/, '.js');
  if (!p.startsWith('.')) p = './' + p;
  return p;
}

function run() {
  if (!fs.existsSync(FACTS_FILE) || !/export interface Facts\b/.test(fs.readFileSync(FACTS_FILE, 'utf8'))) {
    throw new Error(`${rel(FACTS_FILE)} declares no Facts interface: nothing to do (already applied?)`);
  }
  const { program, checker } = loadProgram();
  const factsSf = program.getSourceFile(FACTS_FILE);
  const factsDecl = factsSf.statements.find((s) => ts.isInterfaceDeclaration(s) && s.name.text === 'Facts');
  const factsSymbol = checker.getSymbolAtLocation(factsDecl.name);
  const factsType = checker.getDeclaredTypeOfSymbol(factsSymbol);
  const members = checker.getPropertiesOfType(factsType);
  const memberDecls = new Map(); // declaration node -> flat name
  for (const m of members) for (const d of m.declarations ?? []) memberDecls.set(d, m.name);
  const unknown = members.map((m) => m.name).filter((n) => !FIELD.has(n));
  if (unknown.length) {
    const from = unknown.map((n) => `${n} (${rel(members.find((m) => m.name === n).declarations[0].getSourceFile().fileName)})`);
    throw new Error(`Facts fields PARTS does not place; add each to a part:\n  ${from.join('\n  ')}`);
  }
  const stale = [...FIELD.keys()].filter((n) => !members.some((m) => m.name === n));
  if (stale.length) console.warn(`warning: PARTS names fields Facts no longer has: ${stale.join(', ')}`);

  // Interfaces merged into Facts by `declare module '…/facts.js' { interface Facts extends X {} }`.
  const fragments = new Map(); // symbol -> { decl, names }
  const augmentations = [];
  for (const decl of factsSymbol.declarations) {
    if (decl === factsDecl) continue;
    let mod = decl.parent;
    while (mod && !ts.isModuleDeclaration(mod)) mod = mod.parent;
    if (!mod) throw new Error(`unexpected Facts declaration at ${where(decl)}`);
    augmentations.push(mod);
    for (const h of decl.heritageClauses ?? []) {
      for (const t of h.types) {
        const sym = checker.getSymbolAtLocation(t.expression);
        const fdecl = sym.declarations.find(ts.isInterfaceDeclaration);
        fragments.set(sym, { decl: fdecl, names: fdecl.members.map((m) => m.name.getText()) });
      }
    }
  }

  const isFactsType = (t) => t === factsType || t.symbol === factsSymbol;
  function isFactsLike(t) {
    if (!t) return false;
    if (t.isUnion() || t.isIntersection()) return t.types.some(isFactsLike);
    if (isFactsType(t)) return true;
    if (t.aliasSymbol?.name === 'Partial' && t.aliasTypeArguments?.length === 1 && isFactsType(t.aliasTypeArguments[0])) return true;
    return false;
  }
  const isPartialFacts = (t) => {
    if (!t) return false;
    if (t.isUnion()) return t.types.some(isPartialFacts);
    return t.aliasSymbol?.name === 'Partial' && isFactsType(t.aliasTypeArguments?.[0]);
  };
  /** The one part whose fields all of a flat object's properties are (undefined when it has none or they are not fields). */
  function partShape(t) {
    const types = t.isUnion() ? t.types : [t];
    const parts = new Set();
    for (const u of types) {
      for (const p of checker.getPropertiesOfType(u)) {
        const f = at(p.name);
        if (!f) return { error: `property ${p.name} is no Facts field` };
        parts.add(f.part);
      }
    }
    if (parts.size > 1) return { error: `fields of several parts (${[...parts].join(', ')})` };
    return { part: [...parts][0] };
  }

  const edits = new Map(); // fileName -> [{ start, end, text }]
  const problems = [];
  const warnings = [];
  const touched = new Set();
  /** Where a statement's own leading comments begin (the blank lines before them stay). */
  const commentStart = (node) => {
    const full = node.getFullStart();
    const lead = node.getSourceFile().text.slice(full, node.getStart());
    return full + lead.length - lead.trimStart().length;
  };
  function addEdit(node, text, start = node.getStart(), end = node.getEnd()) {
    const file = node.getSourceFile().fileName;
    const list = edits.get(file) ?? [];
    // An outer rewrite takes over the edits inside it (its text was built from them).
    const kept = list.filter((e) => !(e.start >= start && e.end <= end));
    for (const e of kept) if (e.start < end && start < e.end) throw new Error(`overlapping rewrites at ${where(node)}`);
    kept.push({ start, end, text });
    edits.set(file, kept);
    touched.add(file);
  }
  /** A node's text with the rewrites inside it applied. */
  function textOf(node) {
    const sf = node.getSourceFile();
    const start = node.getStart();
    const end = node.getEnd();
    let text = sf.text.slice(start, end);
    const inner = (edits.get(sf.fileName) ?? []).filter((e) => e.start >= start && e.end <= end).sort((a, b) => b.start - a.start);
    for (const e of inner) text = text.slice(0, e.start - start) + e.text + text.slice(e.end - start);
    return text;
  }
  const typeOf = (node) => checker.getTypeAtLocation(node);
  const propName = (name) => (ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined);

  /** Object-literal members (property assignments, shorthands) as a patch literal grouped by part. */
  function patchLiteral(props, node) {
    const groups = new Map();
    for (const p of props) {
      const flat = propName(p.name);
      const f = flat && at(flat);
      if (!f) {
        problems.push(`${where(p)}: ${flat ?? p.getText()} is no Facts field in an object typed as Facts`);
        continue;
      }
      let text;
      if (ts.isShorthandPropertyAssignment(p)) text = f.name === flat ? flat : `${f.name}: ${flat}`;
      else if (ts.isPropertyAssignment(p)) text = `${f.name}: ${textOf(p.initializer)}`;
      else {
        problems.push(`${where(p)}: unsupported member in an object typed as Facts`);
        continue;
      }
      (groups.get(f.part) ?? groups.set(f.part, []).get(f.part)).push(text);
    }
    void node;
    return `{ ${[...groups].map(([part, items]) => `${part}: { ${items.join(', ')} }`).join(', ')} }`;
  }
  /** A value merged into an incident, as a patch: an Incident as it is, one part's flat object under that part. */
  function asPatch(expr) {
    const e = ts.isParenthesizedExpression(expr) ? expr.expression : expr;
    if (ts.isObjectLiteralExpression(e) && !e.properties.some(ts.isSpreadAssignment)) return patchLiteral(e.properties, e);
    if (ts.isConditionalExpression(e) && [e.whenTrue, e.whenFalse].every((b) => ts.isObjectLiteralExpression(b))) {
      return `${textOf(e.condition)} ? ${asPatch(e.whenTrue)} : ${asPatch(e.whenFalse)}`;
    }
    const t = typeOf(e);
    if (isFactsExpr(e)) return textOf(e);
    const shape = partShape(t);
    if (shape.error) {
      problems.push(`${where(e)}: ${e.getText().slice(0, 60)} merged into Facts has ${shape.error}`);
      return textOf(e);
    }
    if (shape.part === undefined) {
      if (!(ts.isObjectLiteralExpression(e) && e.properties.length === 0))
        problems.push(`${where(e)}: ${e.getText().slice(0, 60)} merged into Facts has no known fields`);
      return textOf(e);
    }
    return `{ ${shape.part}: ${textOf(e)} }`;
  }

  // Untyped flat literals that are used as Facts (`const base = { training: true, seqLen: 16384 }` passed to a
  // lever, spread into a Facts) become incidents too: their variables count as Facts from here on.
  const converted = new Set();
  function scanFlatLiterals(sf) {
    const candidates = new Map();
    const find = (n) => {
      if (
        ts.isVariableDeclaration(n) &&
        !n.type &&
        ts.isIdentifier(n.name) &&
        n.initializer &&
        ts.isObjectLiteralExpression(n.initializer) &&
        n.initializer.properties.length > 0 &&
        n.initializer.properties.every((p) => (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && at(propName(p.name) ?? ''))
      ) {
        candidates.set(checker.getSymbolAtLocation(n.name), n);
      }
      ts.forEachChild(n, find);
    };
    find(sf);
    if (!candidates.size) return;
    const refs = (n) => {
      if (ts.isIdentifier(n) && !ts.isVariableDeclaration(n.parent)) {
        const sym = checker.getSymbolAtLocation(n);
        const decl = sym && candidates.get(sym);
        if (decl) {
          const p = n.parent;
          const asFacts = isFactsLike(checker.getContextualType(n)) || (ts.isSpreadAssignment(p) && isFactsLike(checker.getContextualType(p.parent)));
          if (asFacts) converted.add(sym);
        }
      }
      ts.forEachChild(n, refs);
    };
    refs(sf);
  }
  const isFactsExpr = (e) => {
    if (isFactsLike(typeOf(e))) return true;
    const sym = ts.isIdentifier(e) ? checker.getSymbolAtLocation(e) : undefined;
    return sym !== undefined && converted.has(sym);
  };

  function visit(node) {
    ts.forEachChild(node, visit);
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && converted.has(checker.getSymbolAtLocation(node.name))) {
      addEdit(node.initializer, `incidentOf(${patchLiteral(node.initializer.properties, node.initializer)})`);
      return;
    }
    // x.field on a Facts -> x.part.name
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name)) {
      const sym = checker.getSymbolAtLocation(node.name);
      const flat = sym?.declarations?.map((d) => memberDecls.get(d)).find(Boolean);
      if (flat) {
        const f = at(flat);
        if (isFactsExpr(node.expression)) addEdit(node.name, `${f.part}.${f.name}`);
        else if (f.name !== flat) addEdit(node.name, f.name);
      }
      return;
    }
    if (ts.isObjectLiteralExpression(node)) {
      const ctx = checker.getContextualType(node);
      if (!isFactsLike(ctx)) return;
      // (An object inside Object.assign's sources or a spread is handled there.)
      if (ts.isCallExpression(node.parent) && isObjectAssignOnFacts(node.parent)) return;
      let up = node.parent;
      while (up && (ts.isParenthesizedExpression(up) || ts.isConditionalExpression(up))) up = up.parent;
      if (up && ts.isSpreadAssignment(up)) return;
      const partial =
        isPartialFacts(ctx) && !isFactsLike(ctx.isUnion() ? ctx.types.find((t) => !isPartialFacts(t) && t.flags & ts.TypeFlags.Object) : undefined);
      const args = [];
      let run = [];
      for (const p of node.properties) {
        if (ts.isSpreadAssignment(p)) {
          if (run.length) args.push(patchLiteral(run, node));
          run = [];
          args.push(asPatch(p.expression));
        } else run.push(p);
      }
      if (run.length) args.push(patchLiteral(run, node));
      if (partial) {
        if (args.length > 1) problems.push(`${where(node)}: a Partial<Facts> literal with spreads`);
        addEdit(node, args[0] ?? '{}');
      } else addEdit(node, args.length ? `incidentOf(${args.join(', ')})` : 'newIncident()');
      return;
    }
    if (ts.isCallExpression(node) && isObjectAssignOnFacts(node)) {
      const [target, ...sources] = node.arguments;
      addEdit(node, `mergeInto(${textOf(target)}, ${sources.map(asPatch).join(', ')})`);
      return;
    }
    // expect(facts) compares the flat view, as the test was written.
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'expect' && node.arguments.length === 1) {
      if (isFactsExpr(node.arguments[0])) addEdit(node.arguments[0], `flatView(${textOf(node.arguments[0])})`);
      return;
    }
    if (ts.isObjectBindingPattern(node) && isFactsLike(typeOf(node))) {
      const groups = new Map();
      for (const el of node.elements) {
        const flat = propName(el.propertyName ?? el.name);
        const f = flat && at(flat);
        if (!f || el.dotDotDotToken) {
          problems.push(`${where(el)}: unsupported destructuring of Facts`);
          continue;
        }
        const local = textOf(el.name);
        const init = el.initializer ? ` = ${textOf(el.initializer)}` : '';
        const text = local === f.name && !el.propertyName ? `${local}${init}` : `${f.name}: ${local}${init}`;
        (groups.get(f.part) ?? groups.set(f.part, []).get(f.part)).push(text);
      }
      addEdit(node, `{ ${[...groups].map(([part, items]) => `${part}: { ${items.join(', ')} }`).join(', ')} }`);
      return;
    }
    // `{ … } as Facts` is now incidentOf(…): the assertion goes.
    if (
      ts.isAsExpression(node) &&
      ts.isObjectLiteralExpression(node.expression) &&
      isFactsLike(typeOf(node.type)) &&
      !ts.isArrayLiteralExpression(node.expression)
    ) {
      addEdit(node, textOf(node.expression));
      return;
    }
    if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text === 'Facts') {
      const sym = checker.getSymbolAtLocation(node.typeName);
      if (!sym || (sym !== factsSymbol && checker.getAliasedSymbol(sym) !== factsSymbol)) return;
      const parent = node.parent;
      if (ts.isTypeReferenceNode(parent) && ts.isIdentifier(parent.typeName) && parent.typeName.text === 'Partial') {
        addEdit(parent, 'IncidentPatch');
      } else if (ts.isTypeReferenceNode(parent) && ts.isIdentifier(parent.typeName) && parent.typeName.text === 'Pick') {
        const keys = literalKeys(parent.typeArguments[1]);
        const parts = new Set(keys.map((k) => at(k)?.part));
        if (parts.size !== 1 || parts.has(undefined)) problems.push(`${where(parent)}: Pick<Facts> of ${keys.join(', ')} is not one part`);
        else {
          const part = [...parts][0];
          addEdit(parent, `Pick<${PARTS[part].type}, ${keys.map((k) => `'${at(k).name}'`).join(' | ')}>`);
        }
      } else if (ts.isIndexedAccessTypeNode(parent) && parent.objectType === node) {
        const [key] = literalKeys(parent.indexType);
        const f = at(key);
        if (!f) problems.push(`${where(parent)}: Facts['${key}'] is no field`);
        else addEdit(parent, `${PARTS[f.part].type}['${f.name}']`);
      } else if (ts.isTypeOperatorNode(parent) && parent.operator === ts.SyntaxKind.KeyOfKeyword) {
        problems.push(`${where(parent)}: keyof Facts (add a pre-edit)`);
      } else addEdit(node, 'Incident');
      return;
    }
    if (ts.isImportTypeNode(node) && node.qualifier && ts.isIdentifier(node.qualifier) && node.qualifier.text === 'Facts') {
      addEdit(node, 'Incident');
    }
  }
  function literalKeys(typeNode) {
    const nodes = ts.isUnionTypeNode(typeNode) ? typeNode.types : [typeNode];
    return nodes.map((n) => (ts.isLiteralTypeNode(n) && ts.isStringLiteral(n.literal) ? n.literal.text : `?${n.getText()}`));
  }
  function isObjectAssignOnFacts(call) {
    const e = call.expression;
    return (
      ts.isPropertyAccessExpression(e) &&
      ts.isIdentifier(e.expression) &&
      e.expression.text === 'Object' &&
      e.name.text === 'assign' &&
      call.arguments.length >= 2 &&
      isFactsLike(typeOf(call.arguments[0]))
    );
  }

  const sources = program
    .getSourceFiles()
    .filter((sf) => !sf.isDeclarationFile && sf.fileName.startsWith(root + '/') && !sf.fileName.includes('/node_modules/'));
  for (const sf of sources) scanFlatLiterals(sf);
  for (const sf of sources) visit(sf);

  // The augmentations go; the fragment interfaces become Picks of their part where other code names them.
  for (const mod of augmentations) {
    const sf = mod.getSourceFile();
    addEdit(mod, '', commentStart(mod), mod.getEnd());
    void sf;
  }
  const fragmentTypes = new Map(); // fragment name -> replacement type text
  for (const [sym, { decl, names }] of fragments) {
    const used = sources.some((sf) => {
      let found = false;
      const look = (n) => {
        if (found) return;
        if (ts.isIdentifier(n) && n.text === sym.name && n.parent !== decl && !isInAugmentation(n)) {
          const s = checker.getSymbolAtLocation(n);
          if (s === sym || (s && s.flags & ts.SymbolFlags.Alias && checker.getAliasedSymbol(s) === sym)) found = true;
        }
        ts.forEachChild(n, look);
      };
      look(sf);
      return found;
    });
    const doc = decl
      .getFullText()
      .slice(0, decl.getStart() - decl.getFullStart())
      .replace(/^\s*\n/, '');
    if (!used) {
      addEdit(decl, '', commentStart(decl), decl.getEnd());
      continue;
    }
    const parts = new Set(names.map((n) => at(n).part));
    if (parts.size !== 1) {
      problems.push(`${where(decl)}: ${sym.name} is used and spans parts ${[...parts].join(', ')}`);
      continue;
    }
    const part = [...parts][0];
    const text = `${doc.trimStart()}export type ${sym.name} = Pick<${PARTS[part].type}, ${names.map((n) => `'${at(n).name}'`).join(' | ')}>;`;
    fragmentTypes.set(sym.name, text);
    addEdit(decl, text, commentStart(decl), decl.getEnd());
  }
  function isInAugmentation(n) {
    for (let p = n.parent; p; p = p.parent) if (augmentations.includes(p)) return true;
    return false;
  }

  // `import type { Facts }` goes (the imports the new text needs are added below).
  for (const sf of sources) {
    for (const st of sf.statements) {
      if (!ts.isImportDeclaration(st) || !st.importClause?.namedBindings || !ts.isNamedImports(st.importClause.namedBindings)) continue;
      const named = st.importClause.namedBindings.elements;
      const facts = named.filter((el) => el.name.text === 'Facts' || (el.isTypeOnly && el.name.text === 'Facts'));
      if (!facts.length) continue;
      const rest = named.filter((el) => !facts.includes(el));
      if (rest.length === 0 && !st.importClause.name) addEdit(st, '', st.getStart(), st.getEnd() + (sf.text[st.getEnd()] === '\n' ? 1 : 0));
      else addEdit(st.importClause.namedBindings, `{ ${rest.map((el) => el.getText()).join(', ')} }`);
    }
  }

  if (problems.length) throw new Error('the codemod cannot rewrite these (no file was changed):\n  ' + problems.join('\n  '));

  // The parts' modules, generated from the fields' declarations (their doc comments carried over).
  const generated = generateIncident(checker, members, (decl) => addEdit(decl, '', commentStart(decl), decl.getEnd()));

  // The Facts interface goes from facts.ts.
  addEdit(factsDecl, '', commentStart(factsDecl), factsDecl.getEnd());

  for (const file of overlay.keys()) if (!edits.has(file)) edits.set(file, []);
  for (const [file, list] of edits) {
    touched.add(file);
    let text = overlay.get(file) ?? fs.readFileSync(file, 'utf8');
    for (const e of [...list].sort((a, b) => b.start - a.start)) text = text.slice(0, e.start) + e.text + text.slice(e.end);
    fs.writeFileSync(file, text);
  }
  fs.mkdirSync(INCIDENT_DIR, { recursive: true });
  for (const [file, text] of generated) {
    fs.writeFileSync(file, text);
    touched.add(file);
  }
  for (const w of warnings) console.warn('warning: ' + w);
  return touched;
}

// ---------------------------------------------------------------------------------------------------------
// Generated modules: one per part, and index.ts with the Incident and its helpers.
// ---------------------------------------------------------------------------------------------------------
function generateIncident(checker, members, removeDecl) {
  const out = new Map();
  const movedTypes = new Map(); // name -> part: types facts.ts declared for a field move into its part (no import circle)
  const byName = new Map(members.map((m) => [m.name, m]));
  for (const [part, spec] of Object.entries(PARTS)) {
    const file = path.join(INCIDENT_DIR, `${part}.ts`);
    const imports = new Map(); // module -> Set(names)
    const body = [];
    const moved = [];
    for (const entry of spec.fields.split(/\s+/)) {
      const [flat, name = flat] = entry.split(':');
      const m = byName.get(flat);
      if (!m) continue;
      const decl = m.declarations[0];
      const sf = decl.getSourceFile();
      const lead = sf.text.slice(decl.getFullStart(), decl.getStart()).replace(/^\s*\n/, '');
      let typeText = decl.type.getText();
      // Type names the declaration refers to are imported from where they are declared.
      const visitType = (n) => {
        if (ts.isImportTypeNode(n)) {
          const target = path.resolve(path.dirname(sf.fileName), n.argument.literal.text.replace(/\.js$/, '.ts'));
          const q = n.qualifier.getText();
          typeText = typeText.replace(n.getText(), q);
          addImport(imports, importPath(file, target), q);
          return;
        }
        if (ts.isTypeReferenceNode(n) && ts.isIdentifier(n.typeName)) {
          let sym = checker.getSymbolAtLocation(n.typeName);
          if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
          const d = sym?.declarations?.[0];
          const from = d?.getSourceFile().fileName;
          if (from === FACTS_FILE && !movedTypes.has(n.typeName.text)) {
            movedTypes.set(n.typeName.text, part);
            moved.push(d.getSourceFile().text.slice(commentStartOf(d), d.getEnd()));
            removeDecl(d);
          } else if (from && from !== FACTS_FILE && !from.includes('/node_modules/') && from.startsWith(root))
            addImport(imports, importPath(file, from), n.typeName.text);
        }
        ts.forEachChild(n, visitType);
      };
      visitType(decl.type);
      const optional = decl.questionToken ? '?' : '';
      const leadText = lead
        .split('\n')
        .map((l) => l.replace(/^\s*/, '  ').replace(/^\s+$/, ''))
        .join('\n');
      const flatNote = name !== flat ? `  // {${flat}} in rule templates and the JSON contract's facts.\n` : '';
      body.push(`${leadText.trimEnd() ? leadText.replace(/\s*$/, '\n') : ''}${flatNote}  ${name}${optional}: ${typeText};`);
    }
    const importLines = [...imports]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([mod, names]) => `import type { ${[...names].sort().join(', ')} } from '${mod}';`);
    out.set(
      file,
      `// ${spec.doc}\n// A typed part of the incident (index.ts); generated from the Facts fields by scripts/codemods/facts-to-incident.mjs.\n` +
        (importLines.length ? importLines.join('\n') + '\n' : '') +
        (moved.length ? '\n' + moved.join('\n\n') + '\n' : '') +
        `\nexport interface ${spec.type} {\n${body.join('\n')}\n}\n`,
    );
  }
  const partNames = Object.keys(PARTS);
  const renamed = {};
  for (const [flat, f] of FIELD) if (f.name !== flat) (renamed[f.part] ??= {})[f.name] = flat;
  const index = `// The incident a log describes (issue 23), in typed parts: the OOM message's figures, the run's settings, the
// model, the card, the phase, who holds the memory, memory series, the environment, other stacks' figures, what
// the user tried... Each part is its own module here; the extractors fill them and the levers read them.
// Rule templates ({batch}, {holderWhy}) and the JSON contract's \`facts\` keep one flat record: flatView().
${partNames.map((p) => `import type { ${PARTS[p].type} } from './${p}.js';`).join('\n')}

${partNames.map((p) => `export type { ${[PARTS[p].type, ...[...movedTypes].filter(([, q]) => q === p).map(([n]) => n)].join(', ')} } from './${p}.js';`).join('\n')}

export interface Incident {
${partNames.map((p) => `  /** ${PARTS[p].doc} */\n  ${p}: ${PARTS[p].type};`).join('\n')}
}

/** Some fields of some parts: what an extractor found, merged into an incident by incidentOf() / mergeInto(). */
export type IncidentPatch = { [P in keyof Incident]?: Partial<Incident[P]> };

export const INCIDENT_PARTS = [${partNames.map((p) => `'${p}'`).join(', ')}] as const satisfies readonly (keyof Incident)[];

/** An incident with every part and no field. */
export function newIncident(): Incident {
  return { ${partNames.map((p) => `${p}: {}`).join(', ')} };
}

/** Merges patches into the incident part by part, later ones winning (an explicit undefined too, as a spread does). */
export function mergeInto(incident: Incident, ...patches: (IncidentPatch | Incident | undefined)[]): Incident {
  for (const patch of patches) {
    if (!patch) continue;
    for (const part of INCIDENT_PARTS) if (patch[part]) Object.assign(incident[part], patch[part]);
  }
  return incident;
}

/** A new incident from patches (parts are never shared with them). */
export function incidentOf(...patches: (IncidentPatch | Incident | undefined)[]): Incident {
  return mergeInto(newIncident(), ...patches);
}

/** Copies each field of \`from\` that the incident does not have (a figure already read is never overridden). */
export function fillMissing(incident: Incident, from: Incident): void {
  for (const part of INCIDENT_PARTS) {
    const target = incident[part] as Record<string, unknown>;
    for (const [k, v] of Object.entries(from[part])) if (target[k] === undefined) target[k] = v;
  }
}

/** Drops fields set to undefined, so that only what the log stated remains. */
export function pruneUndefined(incident: Incident): void {
  for (const part of INCIDENT_PARTS) {
    const fields = incident[part] as Record<string, unknown>;
    for (const k of Object.keys(fields)) if (fields[k] === undefined) delete fields[k];
  }
}

/** Whether any part holds a field. */
export function hasAnyFact(incident: Incident): boolean {
  return INCIDENT_PARTS.some((part) => Object.keys(incident[part]).length > 0);
}

/** Fields whose name in their part differs from the flat name templates and the JSON contract use. */
const FLAT_NAMES: Partial<Record<keyof Incident, Record<string, string>>> = ${JSON.stringify(renamed).replace(/"/g, "'")};

/**
 * The incident as one flat record, keys sorted: what rule templates fill their {placeholders} from and what
 * \`gpu-doctor diagnose --json\` prints as \`facts\`. Fields left undefined are not in it.
 */
export function flatView(incident: Incident): Record<string, unknown> {
  const flat: [string, unknown][] = [];
  for (const part of INCIDENT_PARTS) {
    for (const [k, v] of Object.entries(incident[part])) if (v !== undefined) flat.push([FLAT_NAMES[part]?.[k] ?? k, v]);
  }
  return Object.fromEntries(flat.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
`;
  out.set(path.join(INCIDENT_DIR, 'index.ts'), index);
  for (const name of movedTypes.keys()) TYPES.push(name);
  return out;
}

function commentStartOf(node) {
  const full = node.getFullStart();
  const lead = node.getSourceFile().text.slice(full, node.getStart());
  return full + lead.length - lead.trimStart().length;
}

function addImport(imports, mod, name) {
  (imports.get(mod) ?? imports.set(mod, new Set()).get(mod)).add(name);
}

// ---------------------------------------------------------------------------------------------------------
// Pass 2: `facts` -> `incident` where it holds the incident (language service renames), and imports.
// ---------------------------------------------------------------------------------------------------------
function renameAndImport(touched) {
  addImports(touched);
  const { program, checker, options, fileNames } = loadProgram();
  const incidentFile = path.join(INCIDENT_DIR, 'index.ts');
  const incidentSf = program.getSourceFile(incidentFile);
  const incidentDecl = incidentSf.statements.find((s) => ts.isInterfaceDeclaration(s) && s.name.text === 'Incident');
  const incidentType = checker.getDeclaredTypeOfSymbol(checker.getSymbolAtLocation(incidentDecl.name));
  const holdsIncident = (t) => t === incidentType || ((t.isUnion() || t.isIntersection()) && t.types.some(holdsIncident));
  const targets = [];
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || !sf.fileName.startsWith(root + '/') || sf.fileName.includes('/node_modules/')) continue;
    const look = (n) => {
      if (
        (ts.isVariableDeclaration(n) || ts.isParameter(n) || ts.isPropertySignature(n) || ts.isPropertyDeclaration(n)) &&
        ts.isIdentifier(n.name) &&
        n.name.text === 'facts' &&
        holdsIncident(checker.getTypeAtLocation(n.name))
      ) {
        targets.push({ file: sf.fileName, pos: n.name.getStart() });
      }
      ts.forEachChild(n, look);
    };
    look(sf);
  }
  const files = new Map(fileNames.map((f) => [f, fs.readFileSync(f, 'utf8')]));
  const host = {
    getScriptFileNames: () => fileNames,
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => (fs.existsSync(f) ? ts.ScriptSnapshot.fromString(files.get(f) ?? fs.readFileSync(f, 'utf8')) : undefined),
    getCurrentDirectory: () => root,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  };
  const ls = ts.createLanguageService(host);
  console.log(`renaming ${targets.length} declarations named facts`);
  const locations = new Map(); // file -> Set(start)
  for (const t of targets) {
    for (const loc of ls.findRenameLocations(t.file, t.pos, false, false, { providePrefixAndSuffixTextForRename: false }) ?? []) {
      (locations.get(loc.fileName) ?? locations.set(loc.fileName, new Set()).get(loc.fileName)).add(loc.textSpan.start);
    }
  }
  for (const [file, starts] of locations) {
    let text = files.get(file) ?? fs.readFileSync(file, 'utf8');
    for (const s of [...starts].sort((a, b) => b - a)) {
      if (text.slice(s, s + 5) !== 'facts') throw new Error(`rename location is not 'facts' at ${rel(file)}:${s}`);
      text = text.slice(0, s) + 'incident' + text.slice(s + 5);
    }
    fs.writeFileSync(file, text);
    touched.add(file);
  }
  addImports(touched);
  dropUnusedImports(touched);
}

/** Type imports only the Facts interface used (facts.ts's MemoryShape, Phase) go: a name used nowhere else in the file. */
function dropUnusedImports(touched) {
  for (const file of touched) {
    if (!fs.existsSync(file)) continue;
    const text = fs.readFileSync(file, 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const uses = new Map();
    const count = (n) => {
      if (ts.isIdentifier(n) && !ts.isImportSpecifier(n.parent)) uses.set(n.text, (uses.get(n.text) ?? 0) + 1);
      ts.forEachChild(n, count);
    };
    count(sf);
    const cuts = [];
    for (const st of sf.statements) {
      const named = st.importClause?.namedBindings;
      if (!ts.isImportDeclaration(st) || !named || !ts.isNamedImports(named)) continue;
      const keep = named.elements.filter((el) => uses.has(el.name.text) || !(el.isTypeOnly || st.importClause.isTypeOnly));
      if (keep.length === named.elements.length) continue;
      if (keep.length === 0 && !st.importClause.name) cuts.push([st.getStart(), st.getEnd() + (text[st.getEnd()] === '\n' ? 1 : 0), '']);
      else cuts.push([named.getStart(), named.getEnd(), `{ ${keep.map((el) => el.getText()).join(', ')} }`]);
    }
    if (!cuts.length) continue;
    let out = text;
    for (const [a, b, t] of cuts.sort((x, y) => y[0] - x[0])) out = out.slice(0, a) + t + out.slice(b);
    fs.writeFileSync(file, out);
  }
}

/** Imports of the incident's types and helpers that a touched file uses and does not import yet. */
function addImports(touched) {
  const incidentFile = path.join(INCIDENT_DIR, 'index.ts');
  // Imports of the incident's types and helpers that the new text uses.
  for (const file of touched) {
    if (!fs.existsSync(file) || file.startsWith(INCIDENT_DIR + '/')) continue;
    let text = fs.readFileSync(file, 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const declared = new Set();
    const used = new Set();
    const look = (n) => {
      if (ts.isImportSpecifier(n)) declared.add(n.name.text);
      else if (
        (ts.isFunctionDeclaration(n) || ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n) || ts.isVariableDeclaration(n)) &&
        n.name &&
        ts.isIdentifier(n.name)
      )
        declared.add(n.name.text);
      else if (ts.isIdentifier(n) && (HELPERS.includes(n.text) || TYPES.includes(n.text))) {
        const p = n.parent;
        const isMember = (ts.isPropertyAccessExpression(p) && p.name === n) || (ts.isPropertyAssignment(p) && p.name === n) || ts.isPropertySignature(p);
        if (!isMember) used.add(n.text);
      }
      ts.forEachChild(n, look);
    };
    look(sf);
    const need = [...used].filter((n) => !declared.has(n)).sort();
    if (!need.length) continue;
    const values = need.filter((n) => HELPERS.includes(n));
    const types = need.filter((n) => !HELPERS.includes(n));
    const spec = values.length ? `{ ${[...values, ...types.map((t) => `type ${t}`)].join(', ')} }` : `{ ${types.join(', ')} }`;
    const line = `import ${values.length ? '' : 'type '}${spec} from '${importPath(file, incidentFile)}';\n`;
    const imports = sf.statements.filter(ts.isImportDeclaration);
    const after = imports.length ? imports[imports.length - 1].getEnd() + 1 : firstCodeOffset(sf);
    text = text.slice(0, after) + line + text.slice(after);
    fs.writeFileSync(file, text);
  }
}

function firstCodeOffset(sf) {
  return sf.statements.length ? sf.statements[0].getStart() : 0;
}

// A module left with no code (only comments: an emptied fragment file) is deleted with its imports.
function dropEmptied(touched) {
  for (const file of touched) {
    if (!fs.existsSync(file)) continue;
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    if (sf.statements.length > 0) continue;
    fs.unlinkSync(file);
    console.log(`removed ${rel(file)} (nothing left in it)`);
    // Its side-effect imports (`import './lever-facts.js'`) go with it.
    for (const other of touchedOrAll()) {
      if (!fs.existsSync(other)) continue;
      const text = fs.readFileSync(other, 'utf8');
      const osf = ts.createSourceFile(other, text, ts.ScriptTarget.Latest, true);
      const gone = osf.statements.filter(
        (st) => ts.isImportDeclaration(st) && !st.importClause && path.resolve(path.dirname(other), st.moduleSpecifier.text.replace(/\.js$/, '.ts')) === file,
      );
      if (!gone.length) continue;
      let out = text;
      for (const st of [...gone].reverse()) out = out.slice(0, st.getStart()) + out.slice(st.getEnd() + (out[st.getEnd()] === '\n' ? 1 : 0));
      fs.writeFileSync(other, out);
      touched.add(other);
    }
  }
}

function touchedOrAll() {
  const all = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory() && e.name !== 'node_modules') walk(p);
      else if (e.isFile() && p.endsWith('.ts')) all.push(p);
    }
  };
  for (const d of ['src', 'test', 'bench', 'commands']) if (fs.existsSync(path.join(root, d))) walk(path.join(root, d));
  return all;
}

if (process.env.FACTS_CODEMOD_RENAME_ONLY) {
  renameAndImport(new Set());
  process.exit(0);
}
preEdit();
const touched = run();
// The files are written: the program of the next pass reads them, not the pre-edited texts.
overlay.clear();
dropEmptied(touched);
renameAndImport(touched);
console.log(`rewrote ${touched.size} files; now run: npx prettier --write src/diagnose test bench && npx tsc --noEmit -p .`);
