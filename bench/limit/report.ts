/**
 * bench:limit's report, pure arithmetic over instructions per request (one number per measured
 * round): each part's cost as the paired difference to the transport, their sum, txgate over
 * it and over the echo, and what remains named by part of txgate's own request (bench:profile's
 * attribution: each stage on the request's own path, the answer, what lies outside them); and the table the console, limit.md
 * and docs/performance.md (rendered from limit.json) print.
 */
import { median } from '../common/figures.js';
import type { Part } from '../servers/limit-server.js';
import type { LimitScenario } from './parts.js';

/** Instructions per request, one per measured round. */
export type Rounds = readonly number[];

export interface LimitRow {
  readonly scenario: string;
  /** Each part's cost: the transport's median, the others as the median of their rounds less the transport's round beside them. */
  readonly parts: readonly { readonly part: Part; readonly cost: number }[];
  readonly sum: number;
  readonly txgate: number;
  readonly ratio: number;
  /** txgate over the echo of the same run. */
  readonly echoRatio: number;
  /** What remains (txgate − sum) named by part of the request (its stages, the answer, outside them): each group's count less the irreducible parts done in it. */
  readonly remains: readonly { readonly stage: string; readonly cost: number; readonly parts: number; readonly rest: number }[];
}

/**
 * What each irreducible part is measured against in txgate's own request (bench/profile/attribute.ts's
 * parts), by what the two do, not by where a stage's name suggests: the envelope read (JSON and
 * the raw transaction's hex to bytes) and decode with the signature check are txgate's reading,
 * which runs from the host check to the decode stage (its envelope scan in `parse`, the hex to
 * bytes in `decode`); the account lookup is `auth` and `grant`; the transport and the forward
 * (the request written, the answer read) are txgate's forward stage (the send) and what lies
 * outside the stages (uWS's read and write, the answer read off the upstream connection); the
 * audit lines are the answer's hook. What a group of txgate's parts costs beyond its irreducible
 * parts is what remains of it; below zero, txgate does that work in less than the part alone.
 */
const GROUPS: readonly { readonly name: string; readonly txgate: readonly string[]; readonly parts: readonly Part[] }[] = [
  { name: 'reading (host to decode)', txgate: ['host', 'size_cap', 'parse', 'route', 'decode'], parts: ['envelope', 'decode'] },
  { name: 'the account (auth, grant)', txgate: ['auth', 'grant'], parts: ['lookup'] },
  { name: 'the forward and the wire (forward, outside)', txgate: ['forward', 'outside'], parts: ['transport', 'forward'] },
  { name: 'the answer (its hook, the log lines)', txgate: ['answer'], parts: ['audit'] },
];

/** Parts measured inside another (the decode part's native floor): shown beside it, not added to the sum. */
const WITHIN: ReadonlySet<Part> = new Set<Part>(['floor']);

export function limitRow(o: {
  readonly l: LimitScenario;
  readonly txgate: Rounds;
  readonly echo: Rounds;
  readonly parts: ReadonlyMap<Part, Rounds>;
  /** txgate's parts on the scenario's own path (bench:profile's attribution): medians, in the request's order. */
  readonly stages: ReadonlyMap<string, number>;
  /** The txgate median of the scenario `l.over` names. */
  readonly overMedian?: number;
}): LimitRow {
  const transport = o.parts.get('transport')!;
  const parts = [...o.parts].map(([part, rounds]) => ({
    part,
    cost: part === 'transport' ? median(rounds) : median(rounds.map((r, i) => r - (transport[i] ?? transport[0]!))),
  }));
  const sum = parts.reduce((a, p) => a + (WITHIN.has(p.part) ? 0 : p.cost), 0);
  const txgate = median(o.txgate);
  const echo = median(o.echo);
  const cost = (names: readonly string[]) => names.reduce((a, n) => a + (o.stages.get(n) ?? 0), 0);
  const partsIn = (ps: readonly Part[]) => parts.filter((p) => ps.includes(p.part)).reduce((a, p) => a + p.cost, 0);
  const grouped = new Set(GROUPS.flatMap((g) => g.txgate));
  const remains: LimitRow['remains'][number][] = GROUPS.map((g) => ({
    stage: g.name,
    cost: cost(g.txgate),
    parts: partsIn(g.parts),
    rest: cost(g.txgate) - partsIn(g.parts),
  }));
  // The stages that do what no part does (the fee, the rate limit, the status and conditions checks): all of them remains.
  for (const [stage, c] of o.stages) if (!grouped.has(stage)) remains.push({ stage, cost: c, parts: 0, rest: c });
  if (o.l.over !== undefined && o.overMedian !== undefined)
    remains.push({ stage: `over "${o.l.over}"`, cost: txgate - o.overMedian, parts: 0, rest: txgate - o.overMedian });
  return { scenario: o.l.name, parts, sum, txgate, ratio: txgate / sum, echoRatio: txgate / echo, remains };
}

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
const signed = (n: number) => (n < 0 ? `−${k(-n)}` : `+${k(n)}`);

/** One signed figure per name: a group's (or stage's) count less its parts (entries of one name added up: a run recorded before they were one). */
function remainsByName(r: LimitRow): { stage: string; rest: number }[] {
  const by = new Map<string, number>();
  for (const x of r.remains) by.set(x.stage, (by.get(x.stage) ?? 0) + x.rest);
  return [...by].map(([stage, rest]) => ({ stage, rest }));
}

/**
 * The console's and the Markdown's table: one row per scenario (the decode part with its native
 * floor beside it), then what remains of each, one signed figure per group of txgate's parts.
 */
export function limitTables(rows: readonly LimitRow[]): string[] {
  const out = [
    '| scenario | transport | envelope | lookup | decode | forward | audit | sum | txgate | txgate / sum | txgate / echo |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const cost = (r: LimitRow, p: Part) => r.parts.find((x) => x.part === p)?.cost;
  const cell = (r: LimitRow, p: Part) => {
    const c = cost(r, p);
    if (c === undefined) return '—';
    const floor = p === 'decode' ? cost(r, 'floor') : undefined;
    return floor === undefined ? k(c) : `${k(c)} (native ${k(floor)})`;
  };
  for (const r of rows)
    out.push(
      `| ${r.scenario} | ${(['transport', 'envelope', 'lookup', 'decode', 'forward', 'audit'] as const).map((p) => cell(r, p)).join(' | ')} | ${k(r.sum)} | ${k(r.txgate)} | ${r.ratio.toFixed(2)}x | ${r.echoRatio.toFixed(2)}x |`,
    );
  for (const r of rows) {
    if (r.remains.length === 0) continue;
    out.push(
      '',
      `What remains of ${r.scenario} (${k(r.txgate - r.sum)}), by part of txgate's request, each txgate's count of it less the irreducible parts done in it (below zero: txgate does it in less than the parts alone): ` +
        remainsByName(r)
          .map((x) => `${x.stage} ${signed(x.rest)}`)
          .join(', '),
    );
  }
  return out;
}
