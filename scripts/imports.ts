/**
 * `node dist/scripts/imports.js [--check]`: the module graph of src/ from its real imports (type
 * imports included: they couple modules too), grouped by folder, with its cycles and every import
 * that goes against the layer order below (docs/architecture.md explains the layers). `--check`
 * exits 1 when there is a cycle or an upward import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/** The layers, lowest first: a module may import from its own layer or a lower one. */
export const LAYERS: readonly (readonly string[])[] = [
  // base: the reasons table, answers, logs, the configuration readers, native bindings
  [
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
    'rpc-scan.ts',
    'send-kind.ts',
  ],
  ['pipeline'],
  // the parts the configuration configures, and the configuration, which composes their sections
  // (the account layer declares its own: accounts/config.ts), with the chains built from it
  ['tx', 'accounts', 'limits', 'forward', 'tls', 'config.ts', 'chains.ts'],
  // rules over the domain: the sync send, who may submit where
  ['sync', 'admission.ts'],
  ['stages'],
  // what every front end shares: the interface, the port, the answer writer, the request log
  ['front'],
  ['http', 'ws', 'metrics'],
  ['app.ts', 'threads', 'worker.ts', 'service.ts', 'cli.ts', 'dev'],
];

/** The unit a file belongs to: its top folder under src/, or the file itself at the top. */
export const unitOf = (file: string): string => file.split('/')[0]!;

export function layerOf(unit: string): number {
  const i = LAYERS.findIndex((l) => l.includes(unit));
  if (i < 0) throw new Error(`${unit}: in no layer (add it to LAYERS in scripts/imports.ts)`);
  return i;
}

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

function main(): void {
  const root = join(import.meta.dirname, '../../src');
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
      if (layerOf(b) > layerOf(a)) upward.push(`${from} -> ${to}`);
    }
  }
  const unitGraph = new Map([...units].map(([k, v]) => [k, [...v].sort()]));
  console.log('# Folders and what they import');
  for (const [k, v] of [...unitGraph].sort(([a], [b]) => layerOf(a) - layerOf(b) || a.localeCompare(b))) console.log(`${k} -> ${v.join(', ')}`);
  const fileCycles = cycles(files);
  const unitCycles = cycles(unitGraph);
  console.log('\n# Cycles between files');
  for (const c of fileCycles) console.log(c.join(' <-> '));
  console.log('\n# Cycles between folders');
  for (const c of unitCycles) console.log(c.join(' <-> '));
  console.log('\n# Imports into a higher layer');
  for (const u of upward.sort()) console.log(u);
  if (process.argv.includes('--check') && (fileCycles.length > 0 || unitCycles.length > 0 || upward.length > 0)) process.exit(1);
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) main();
