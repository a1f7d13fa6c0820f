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
  /** What remains (txgate − sum) named by part of the request (its stages, the answer, outside them): each part's cost less the irreducible parts done in it. */
  readonly remains: readonly { readonly stage: string; readonly cost: number; readonly parts: number; readonly rest: number }[];
}

/**
 * The part of txgate's request (bench/profile/attribute.ts's names) each irreducible part is done
 * in: the transport outside the stages (uWS's read and write of the request), the envelope read
 * in the parse stage, the account lookup in auth, the decode and signature check in decode, the
 * forward in the forward stage, the audit lines in the answer's hook.
 */
const PART_OF: Record<Part, string> = {
  transport: 'outside',
  envelope: 'parse',
  lookup: 'auth',
  decode: 'decode',
  forward: 'forward',
  audit: 'answer',
};

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
  const sum = parts.reduce((a, p) => a + p.cost, 0);
  const txgate = median(o.txgate);
  const echo = median(o.echo);
  const partsIn = (stage: string) => parts.filter((p) => PART_OF[p.part] === stage).reduce((a, p) => a + p.cost, 0);
  const remains: LimitRow['remains'][number][] = [...o.stages].map(([stage, cost]) => ({ stage, cost, parts: partsIn(stage), rest: cost - partsIn(stage) }));
  if (o.l.over !== undefined && o.overMedian !== undefined)
    remains.push({ stage: `over "${o.l.over}"`, cost: txgate - o.overMedian, parts: 0, rest: txgate - o.overMedian });
  return { scenario: o.l.name, parts, sum, txgate, ratio: txgate / sum, echoRatio: txgate / echo, remains };
}

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

/** The console's and the Markdown's table: one row per scenario, then what remains by stage. */
export function limitTables(rows: readonly LimitRow[]): string[] {
  const out = [
    '| scenario | transport | envelope | lookup | decode | forward | audit | sum | txgate | txgate / sum | txgate / echo |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const cell = (r: LimitRow, p: Part) => {
    const c = r.parts.find((x) => x.part === p);
    return c === undefined ? '—' : k(c.cost);
  };
  for (const r of rows)
    out.push(
      `| ${r.scenario} | ${(['transport', 'envelope', 'lookup', 'decode', 'forward', 'audit'] as const).map((p) => cell(r, p)).join(' | ')} | ${k(r.sum)} | ${k(r.txgate)} | ${r.ratio.toFixed(2)}x | ${r.echoRatio.toFixed(2)}x |`,
    );
  for (const r of rows) {
    if (r.remains.length === 0) continue;
    out.push('', `What remains of ${r.scenario} (${k(r.txgate - r.sum)}), by stage: ` + r.remains.map((x) => `${x.stage} ${k(x.rest)}`).join(', '));
  }
  return out;
}
