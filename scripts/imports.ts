/**
 * `node dist/scripts/imports.js [--check]`: the module graph of src/ from its real imports (type
 * imports included: they couple modules too), grouped by folder, with its cycles and every import
 * that goes against the layer order below (docs/architecture.md explains the layers); and the
 * same rule over every tree of the repository that code is imported from (`TREES`: src/, the
 * client package, bench/, test/support/), each by its own layers, with the trees each may import.
 * `--check` prints only the problems and exits 1 when there is a cycle, an upward import or an
 * import into a tree not allowed; test/unit/import-layers.test.ts makes the same check in `npm test`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/** A layer: its name, what is in it (the docs' layer table), and its units (a top file or folder of src/). */
export interface Layer {
  readonly name: string;
  readonly about: string;
  readonly units: readonly string[];
}

/**
 * The layers, lowest first: a module may import from its own layer or a lower one. The one
 * declaration: the check below, and the layer table and graph of docs/architecture.md
 * (`npm run readme`), are made from it.
 */
export const LAYERS: readonly Layer[] = [
  {
    name: 'base',
    about:
      'the reasons table and the answers built from it, expected failures as values, the configuration readers, native bindings, the build, busy polling, a free port, the one file watch, the values a peer sends (quantities, hashes) (`base/`); logs (`log/`); the JSON-RPC id rule, the method names, the request read in one pass, the three kinds of send (`rpc/`)',
    units: ['base', 'log', 'rpc'],
  },
  { name: 'pipeline', about: 'the request context, the stage and runner types, the builder, `Later`, the answer path', units: ['pipeline'] },
  {
    name: 'upstreams',
    about: 'the kinds of upstream (a sequencer, the chain RPC) and their registry: transports to peers, with no state of the service',
    units: ['upstreams'],
  },
  {
    name: 'domain',
    about:
      'the parts the configuration configures, and the configuration (`config/`): every field declared once (`config-schema.ts`, composing the sections the parts declare: the account layer its own, `accounts/config.ts`), read and checked (`config.ts`), with the chains built from it (`chains.ts`)',
    units: ['tx', 'accounts', 'limits', 'forward', 'express-lane', 'conditional', 'tls', 'flashblocks', 'config'],
  },
  {
    name: 'rules over the domain',
    about:
      'the sync send; following accepted transactions to their block, composed, with its seam between worker threads (given the ports it uses: it starts no thread); who may submit where (host → key → grant); sequencer health, its board and its prober',
    units: ['sync', 'track', 'admission', 'health'],
  },
  { name: 'stages', about: 'one file per stage, and their order', units: ['stages'] },
  {
    name: 'what front ends share',
    about: 'transport-neutral: the front-end interface, request ids, the request log, readiness, a body received whole, a body as text',
    units: ['front'],
  },
  { name: 'observation', about: 'the metrics: primitives, the families, the observers', units: ['metrics'] },
  {
    name: 'HTTP',
    about: 'the public uWS port (register, listen, drain), the answer writer, the framing checks, the HTTP front end, the internal listener',
    units: ['http'],
  },
  { name: 'the WebSocket transport', about: 'an upgrade on the HTTP port: connections, frames into the same pipeline', units: ['ws'] },
  {
    name: 'composition',
    about:
      "the top of src/: the composition root (`app.ts`; a thread's sends, `sends.ts`), /ready's checks, the process (`service.ts`, `worker.ts`), the CLI (`cli.ts`) and the command-line reader every tool shares (`cli-args.ts`); threads; the development setup; the rehearsal of a thread's submission path (`rehearsal`)",
    units: ['app.ts', 'sends.ts', 'ready-checks.ts', 'threads', 'worker.ts', 'service.ts', 'cli.ts', 'cli-args.ts', 'dev', 'rehearsal'],
  },
];

/** The unit a file belongs to: its top folder under src/, or the file itself at the top. */
export const unitOf = (file: string): string => file.split('/')[0]!;

export function layerOf(unit: string, layers: readonly Layer[] = LAYERS): number {
  const i = layers.findIndex((l) => l.units.includes(unit));
  if (i < 0) throw new Error(`${unit}: in no layer (add it to ${layersName(layers)} in scripts/imports.ts)`);
  return i;
}

/**
 * The client package's layers (packages/client/src), lowest first, by the same rule: what an
 * answer is and how it is carried; links and readings; what is built on them; the kit and the
 * adapters; the package's entry.
 */
export const CLIENT_LAYERS: readonly Layer[] = [
  {
    name: 'answers',
    about:
      'an answer over HTTP (`http.ts`), what a link is (`rpc-link.ts`), the outcome table (`outcomes.ts`), the reason of an error (`reason.ts`), why a TLS connection failed (`tls-cause.ts`), a URL whose scheme its port does not speak (`scheme-probe.ts`)',
    units: ['tls-cause.ts', 'scheme-probe.ts', 'http.ts', 'rpc-link.ts', 'outcomes.ts', 'reason.ts'],
  },
  {
    name: 'links and readings',
    about:
      "the WebSocket transport (`ws.ts`) and the link a URL names (`link.ts`); a submission's outcomes (`submission.ts`); a refusal described (`refusal.ts`)",
    units: ['ws.ts', 'link.ts', 'submission.ts', 'refusal.ts'],
  },
  {
    name: 'on the links',
    about: "submission with its outcome resolved (`submitter.ts`), the edge's status (`status.ts`), refusals as each library's errors",
    units: ['submitter.ts', 'status.ts', 'errors-ethers.ts', 'errors-viem.ts'],
  },
  { name: 'the kit and the adapters', about: 'the kit (`gate.ts`), the viem transport, the ethers provider', units: ['gate.ts', 'viem.ts', 'ethers.ts'] },
  { name: 'entry', about: "the package's exports", units: ['index.ts'] },
];

/**
 * The benches' layers (bench/), lowest first, a unit a folder: the load clients and probes, run
 * as processes of their own; what every bench shares; the peers a bench runs; the measuring
 * parts; the commands. A bench may import src/ (the code it measures), never test/.
 */
export const BENCH_LAYERS: readonly Layer[] = [
  { name: 'drivers', about: 'load clients and probes, each run as a process of its own (`drivers/`)', units: ['drivers'] },
  {
    name: 'shared',
    about: "the command line, a run's start and its results, figures and medians, the txgate starter, the fleet edge (`common/`)",
    units: ['common'],
  },
  { name: 'peers', about: 'the stub sequencer, the echo and the floor a bench runs txgate against (`servers/`)', units: ['servers'] },
  {
    name: 'measuring',
    about:
      "the profiler (`profile/`: each stage on its own path, the verdict), instruction counting under callgrind (`instr/`), the hot path against its parts (`limit/`), the guard's tolerances (`guard/`), load (`load/`), the tinybench suites (`micro/`), the TLS edge (`tls/`)",
    units: ['profile', 'instr', 'limit', 'guard', 'load', 'micro', 'tls'],
  },
  { name: 'commands', about: 'what `npm run bench:*` runs (`entry/`)', units: ['entry'] },
];

/**
 * test/support/'s layers, lowest first, a unit a file: the parts a test builds on; a gate in this
 * process or as the CLI, and what needs one; the fixture and the express lane's chain, built on
 * those. Test files (test/<tier>/) are above every layer and import any of them.
 */
export const SUPPORT_LAYERS: readonly Layer[] = [
  {
    name: 'parts',
    about:
      "the gate in this process (`harness.ts`), Ethereum test vectors, stage contexts and fixtures, stub sequencers, certificates, the auction contract deployed (`auction.ts`), HTTP and JSON-text helpers, worker-thread logs, Solana bytes, a WebSocket transport client, a proxy that loses or drops a submission, a TCP link a test can cut, a temporary folder removed after the file (`temp-dir.ts`), the conditional sequencer of `npm start -- --conditional` (src/dev/conditional-sequencer/) with an anvil behind it (`conditional-sequencer.ts`), the text of one log line built (`log-line-text.ts`), two pipelines run through the profiler's stage probes (`probed-pipeline.ts`), the one line a refusing command writes on stderr (`one-line.ts`), `npm start`'s command line on a test's ports (`dev-args.ts`)",
    units: [
      'harness.ts',
      'vectors.ts',
      'stage-context.ts',
      'stage-fixtures.ts',
      'stub-sequencer.ts',
      'tls-certs.ts',
      'auction.ts',
      'express-lane-config.ts',
      'http.ts',
      'json-text.ts',
      'log-threads.ts',
      'solana.ts',
      'ws-client.ts',
      'fault-proxy.ts',
      'cuttable-link.ts',
      'temp-dir.ts',
      'conditional-sequencer.ts',
      'log-line-text.ts',
      'probed-pipeline.ts',
      'one-line.ts',
      'dev-args.ts',
    ],
  },
  {
    name: 'on the parts',
    about:
      "txgate as the CLI (`processes.ts`), signed transactions sent through a gate (`txs.ts`), the express lane endpoint (`express-lane-endpoint.ts`), the fleet store's database for a file (`fleet-db.ts`), a conditional submission over HTTP or the WebSocket transport (`conditional-calls.ts`), the WebSocket transport's gate options, stub and accounts (`ws-gate.ts`)",
    units: ['processes.ts', 'txs.ts', 'express-lane-endpoint.ts', 'fleet-db.ts', 'conditional-calls.ts', 'ws-gate.ts'],
  },
  {
    name: 'fixtures',
    about:
      "the fixture `useGate` (`gate-fixture.ts`), the express lane on a real chain (`express-lane-chain.ts`), the client package's chain: anvil behind a fault proxy and a gate (`client-chain.ts`), the sync send's two anvils, one mining and one not (`sync-chains.ts`)",
    units: ['gate-fixture.ts', 'express-lane-chain.ts', 'client-chain.ts', 'sync-chains.ts'],
  },
];

const layersName = (layers: readonly Layer[]): string =>
  layers === CLIENT_LAYERS ? 'CLIENT_LAYERS' : layers === BENCH_LAYERS ? 'BENCH_LAYERS' : layers === SUPPORT_LAYERS ? 'SUPPORT_LAYERS' : 'LAYERS';

/**
 * A tree of the repository the check reads, from the repository root: its folder, its layers,
 * and the trees it may import (their folders). Nothing imports a tree not listed for it; the
 * import cycles are looked for across all of them at once.
 */
export interface Tree {
  readonly dir: string;
  readonly layers: readonly Layer[];
  readonly imports: readonly string[];
}

export const TREES: readonly Tree[] = [
  { dir: 'src', layers: LAYERS, imports: [] },
  { dir: 'packages/client/src', layers: CLIENT_LAYERS, imports: [] },
  { dir: 'bench', layers: BENCH_LAYERS, imports: ['src'] },
  { dir: 'test/support', layers: SUPPORT_LAYERS, imports: ['src'] },
];

/** Every relative import of every .ts file under `root` (or under each of `dirs` in it), as paths relative to `root`. */
export function importGraph(root: string, dirs: readonly string[] = ['.']): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) {
        const text = readFileSync(p, 'utf8');
        // Static imports and re-exports (`… from './x.js'`), side-effect imports, dynamic import().
        const specifiers = text.matchAll(
          /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm,
        );
        const to = [...specifiers].map((m) => relative(root, normalize(join(dirname(p), (m[1] ?? m[2] ?? m[3])!.replace(/\.js$/, '.ts')))));
        graph.set(relative(root, p), [...new Set(to)]);
      }
    }
  };
  for (const d of dirs) walk(join(root, d));
  // Only edges between modules of the tree (not package.json, native/ and the like).
  for (const [from, to] of graph)
    graph.set(
      from,
      to.filter((t) => graph.has(t)),
    );
  return graph;
}

/** Strongly connected components of more than one node (Tarjan). */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let n = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** What the check finds in a tree: the folders' graph, cycles between files and between folders, imports into a higher layer. */
export interface ImportReport {
  readonly unitGraph: ReadonlyMap<string, readonly string[]>;
  readonly fileCycles: readonly string[][];
  readonly unitCycles: readonly string[][];
  readonly upward: readonly string[];
}

export const ROOT = join(import.meta.dirname, '../..');
export const SRC = join(ROOT, 'src');
export const CLIENT_SRC = join(ROOT, 'packages/client/src');

export function checkImports(root = SRC, layers: readonly Layer[] = LAYERS): ImportReport {
  const files = importGraph(root);
  const units = new Map<string, Set<string>>();
  const upward: string[] = [];
  for (const [from, tos] of files) {
    for (const to of tos) {
      const a = unitOf(from);
      const b = unitOf(to);
      if (a === b) continue;
      if (!units.has(a)) units.set(a, new Set());
      units.get(a)!.add(b);
      if (layerOf(b, layers) > layerOf(a, layers)) upward.push(`${from} -> ${to}`);
    }
  }
  // Every module is in a layer, importing or not.
  for (const f of files.keys()) layerOf(unitOf(f), layers);
  const unitGraph = new Map(
    [...units].map(([k, v]) => [k, [...v].sort()] as const).sort(([a], [b]) => layerOf(a, layers) - layerOf(b, layers) || a.localeCompare(b)),
  );
  return { unitGraph, fileCycles: cycles(files), unitCycles: cycles(unitGraph), upward: upward.sort() };
}

/** What the check finds across the trees: each tree's own report, cycles between files of any trees, imports into a tree not allowed. */
export interface RepoReport {
  readonly trees: ReadonlyMap<string, ImportReport>;
  readonly fileCycles: readonly string[][];
  readonly across: readonly string[];
}

/** The tree a path from the root is in (the longest folder that holds it), or undefined. */
const treeOf = (file: string, trees: readonly Tree[]): Tree | undefined =>
  trees.filter((t) => file.startsWith(`${t.dir}/`)).sort((a, b) => b.dir.length - a.dir.length)[0];

export function checkRepo(root = ROOT, trees: readonly Tree[] = TREES): RepoReport {
  const reports = new Map(trees.map((t) => [t.dir, checkImports(join(root, t.dir), t.layers)] as const));
  const files = importGraph(
    root,
    trees.map((t) => t.dir),
  );
  const across: string[] = [];
  for (const [from, tos] of files)
    for (const to of tos) {
      const a = treeOf(from, trees)!;
      const b = treeOf(to, trees)!;
      if (a !== b && !a.imports.includes(b.dir))
        across.push(`${from} -> ${to} (${a.dir}/ may import ${a.imports.length === 0 ? 'no other tree' : a.imports.map((d) => `${d}/`).join(', ')})`);
    }
  return { trees: reports, fileCycles: cycles(files), across: across.sort() };
}

/** The docs' layer table (docs/architecture.md's `layers` block). */
export function renderLayers(layers: readonly Layer[] = LAYERS): string {
  const rows = layers.map((l, i) => `| ${i} | ${l.name} | ${l.units.map((u) => `\`${u}\``).join(', ')} | ${l.about} |`);
  return ['| # | layer | modules | what |', '|---|---|---|---|', ...rows].join('\n');
}

/** The docs' graph of folders and what they import, from the real imports (the `imports` block). */
export function renderImportGraph(root = SRC): string {
  const r = checkImports(root);
  const width = Math.max(...[...r.unitGraph.keys()].map((k) => k.length));
  const lines = [...r.unitGraph].map(([k, v]) => `${k.padEnd(width)} -> ${v.join(', ')}`);
  return ['```', ...lines, '```'].join('\n');
}

function main(): void {
  const r = checkImports();
  if (process.argv.includes('--check')) {
    const repo = checkRepo();
    let problems = repo.fileCycles.length + repo.across.length;
    for (const c of repo.fileCycles) console.error(`import cycle between files: ${c.join(' <-> ')}`);
    for (const u of repo.across) console.error(`import into a tree not allowed: ${u}`);
    for (const [tree, t] of repo.trees) {
      for (const c of t.unitCycles) console.error(`${tree}: import cycle between folders: ${c.join(' <-> ')}`);
      for (const u of t.upward) console.error(`${tree}: import into a higher layer: ${u}`);
      problems += t.unitCycles.length + t.upward.length;
    }
    if (problems > 0) process.exit(1);
    return;
  }
  console.log('# Folders and what they import');
  for (const [k, v] of r.unitGraph) console.log(`${k} -> ${v.join(', ')}`);
  console.log('\n# Cycles between files');
  for (const c of r.fileCycles) console.log(c.join(' <-> '));
  console.log('\n# Cycles between folders');
  for (const c of r.unitCycles) console.log(c.join(' <-> '));
  console.log('\n# Imports into a higher layer');
  for (const u of r.upward) console.log(u);
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) main();
