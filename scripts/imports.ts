/**
 * `node dist/scripts/imports.js [--check]`: the module graph of src/ from its real imports (type
 * imports included: they couple modules too), grouped by folder, with its cycles and every import
 * that goes against the layer order below (docs/architecture.md explains the layers). `--check`
 * prints only the problems and exits 1 when there is a cycle or an upward import;
 * test/unit/import-layers.test.ts makes the same check in `npm test`.
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
      'the reasons table and the answers built from it, logs, the configuration readers, native bindings, the JSON-RPC id rule, the method names, the request read in one pass, the two kinds of send, the values a peer sends (quantities, hashes)',
    units: [
      'reasons.ts',
      'errors.ts',
      'log-line.ts',
      'log-sink.ts',
      'log.ts',
      'config-reader.ts',
      'config-fields.ts',
      'or-error.ts',
      'build.ts',
      'native.ts',
      'busy-poll.ts',
      'rpc-id.ts',
      'rpc-methods.ts',
      'rpc-values.ts',
      'rpc-scan.ts',
      'send-kind.ts',
    ],
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
      'the parts the configuration configures, and the configuration: every field declared once (`config-schema.ts`, composing the sections the parts declare: the account layer its own, `accounts/config.ts`), read and checked (`config.ts`), with the chains built from it',
    units: ['tx', 'accounts', 'limits', 'forward', 'express-lane', 'tls', 'config-schema.ts', 'config.ts', 'chains.ts'],
  },
  {
    name: 'rules over the domain',
    about: 'the sync send; following accepted transactions to their block; who may submit where (host → key → grant)',
    units: ['sync', 'track', 'admission.ts'],
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
  { name: 'the WebSocket lane', about: 'an upgrade on the HTTP port: connections, frames into the same pipeline', units: ['ws'] },
  {
    name: 'composition',
    about: "the composition root, /ready's checks, threads, the process, the CLI, the development setup",
    units: ['app.ts', 'ready-checks.ts', 'tracking.ts', 'threads', 'worker.ts', 'service.ts', 'cli.ts', 'dev'],
  },
];

/** The unit a file belongs to: its top folder under src/, or the file itself at the top. */
export const unitOf = (file: string): string => file.split('/')[0]!;

export function layerOf(unit: string, layers: readonly Layer[] = LAYERS): number {
  const i = layers.findIndex((l) => l.units.includes(unit));
  if (i < 0) throw new Error(`${unit}: in no layer (add it to ${layers === CLIENT_LAYERS ? 'CLIENT_LAYERS' : 'LAYERS'} in scripts/imports.ts)`);
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
    about: 'an answer over HTTP (`http.ts`), what a link is (`rpc-link.ts`), the outcome table (`outcomes.ts`), the reason of an error (`reason.ts`)',
    units: ['http.ts', 'rpc-link.ts', 'outcomes.ts', 'reason.ts'],
  },
  {
    name: 'links and readings',
    about: "the WebSocket lane (`ws.ts`) and the link a URL names (`link.ts`); a submission's outcomes (`submission.ts`); a refusal described (`refusal.ts`)",
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

/** Every relative import of every .ts file under `root`, as paths relative to `root`. */
export function importGraph(root: string): Map<string, string[]> {
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
  walk(root);
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

export const SRC = join(import.meta.dirname, '../../src');
export const CLIENT_SRC = join(import.meta.dirname, '../../packages/client/src');

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
    let problems = 0;
    for (const [tree, t] of [
      ['src', r],
      ['packages/client/src', checkImports(CLIENT_SRC, CLIENT_LAYERS)],
    ] as const) {
      for (const c of t.fileCycles) console.error(`${tree}: import cycle between files: ${c.join(' <-> ')}`);
      for (const c of t.unitCycles) console.error(`${tree}: import cycle between folders: ${c.join(' <-> ')}`);
      for (const u of t.upward) console.error(`${tree}: import into a higher layer: ${u}`);
      problems += t.fileCycles.length + t.unitCycles.length + t.upward.length;
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
