/**
 * bench:limit's table: which irreducible parts each scenario has, the parts server's setup built
 * from what txgate answered and logged, and the report's arithmetic (pure: the parts' costs as
 * paired differences to the transport, their sum, txgate over it, and what remains by stage).
 */
import { connect } from 'node:net';
import type { Part, PartSetup } from '../servers/limit-server.js';
import type { StageCost } from '../common/stage-costs.js';
import { median } from '../common/lib.js';
import { CHAINS, WS_SEQUENCER, type Scenario } from '../instr/scenarios.js';

export interface LimitScenario {
  readonly name: string;
  /** The parts beyond the transport, in the order a request meets them. */
  readonly parts: readonly Exclude<Part, 'transport'>[];
  /** The stage the scenario's request leaves the pipeline at (its stages are those up to it). */
  readonly exit: 'route' | 'auth' | 'fee' | 'forward';
  /** The stub sequencer it forwards to: its offset from the first stub's port, and ws:// or http://. */
  readonly stub?: { readonly offset: number; readonly ws?: true };
  readonly chainId?: number;
  /** The chain's own work over the plain valid submission (tracking, the lane's check): what remains beyond the stages. */
  readonly over?: string;
}

const SUBMISSION = ['envelope', 'lookup', 'decode', 'forward', 'audit'] as const;
export const LIMIT: readonly LimitScenario[] = [
  { name: 'eth_chainId', parts: ['envelope', 'audit'], exit: 'route' },
  { name: '401 unauthorized', parts: ['envelope', 'lookup', 'audit'], exit: 'auth' },
  { name: '402 fee_rejected', parts: ['envelope', 'lookup', 'decode', 'audit'], exit: 'fee' },
  { name: 'valid submission', parts: SUBMISSION, exit: 'forward', stub: { offset: 0 } },
  { name: WS_SEQUENCER, parts: SUBMISSION, exit: 'forward', stub: { offset: CHAINS.ws.stub, ws: true }, chainId: CHAINS.ws.chainId },
  {
    name: 'valid submission, tracked chain',
    parts: SUBMISSION,
    exit: 'forward',
    stub: { offset: CHAINS.tracked.stub },
    chainId: CHAINS.tracked.chainId,
    over: 'valid submission',
  },
  {
    name: 'valid submission, express lane not ours',
    parts: SUBMISSION,
    exit: 'forward',
    stub: { offset: CHAINS.laneNotOurs.stub },
    chainId: CHAINS.laneNotOurs.chainId,
    over: 'valid submission',
  },
];

/** The parts server's scenario for a part of a txgate scenario: the same requests, to the part's port. */
export const partName = (scenario: string, part: Part) => `${scenario} · ${part}`;

/** What txgate answered one request of a scenario with, and the log lines it wrote for it. */
export interface Captured {
  readonly status: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  readonly lines: readonly string[];
}

/** Headers uWS writes itself (or that depend on the body): not replayed by the parts server. */
const OWN_HEADERS = new Set(['date', 'content-length', 'uwebsockets', 'connection', 'transfer-encoding']);

/** One request of `s` to `port` over a fresh connection: the raw answer's status, headers and body. */
export function askOnce(port: number, s: Scenario): Promise<Omit<Captured, 'lines'>> {
  const body = s.bodies[0]!;
  let head = `POST / HTTP/1.1\r\nHost: ${s.host ?? 'localhost'}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  for (const [k, v] of Object.entries(s.headers)) head += `${k}: ${v}\r\n`;
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    sock.on('connect', () => sock.write(head + '\r\n' + body));
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
      const len = Number(/content-length: *(\d+)/i.exec(lines.join('\n'))?.[1] ?? 0);
      if (buf.length < end + 4 + len) return;
      sock.destroy();
      const headers = lines.slice(1).flatMap((l): [string, string][] => {
        const at = l.indexOf(':');
        const name = l.slice(0, at).trim().toLowerCase();
        return OWN_HEADERS.has(name) ? [] : [[name, l.slice(at + 1).trim()]];
      });
      resolve({ status: lines[0]!.slice(9), headers, body: buf.subarray(end + 4, end + 4 + len).toString('utf8') });
    });
    sock.on('error', reject);
  });
}

/** A logged line's fields (level, time and pid are the sink's own) and its msg. */
function lineFields(line: string): { fields: [string, string | number | boolean][]; msg: string } {
  const o = JSON.parse(line) as Record<string, unknown>;
  const fields = Object.entries(o).filter(
    (e): e is [string, string | number | boolean] => !['level', 'time', 'pid', 'msg'].includes(e[0]) && ['string', 'number', 'boolean'].includes(typeof e[1]),
  );
  return { fields, msg: String(o.msg) };
}

/** The raw transactions of a scenario's requests, in their order. */
const rawsOf = (s: Scenario) => s.bodies.map((b) => (JSON.parse(b) as { params: string[] }).params[0]!);

/** The parts server's setup for `l` (its ports from `port` on) and the scenarios that drive them. */
export function partsOf(
  l: LimitScenario,
  s: Scenario,
  captured: Captured,
  o: { port: number; stubBase: number; keyHashes: readonly string[] },
): { setups: PartSetup[]; scenarios: Scenario[] } {
  const parts: Part[] = ['transport', ...l.parts.filter((p) => p !== 'audit' || captured.lines.length > 0)];
  const raws = l.parts.includes('decode') ? rawsOf(s) : undefined;
  const setups = parts.map(
    (part, i): PartSetup => ({
      port: o.port + i,
      part,
      status: captured.status,
      headers: captured.headers,
      body: captured.body,
      ...(part === 'decode' || part === 'forward' ? { raws: raws!, chainId: l.chainId ?? 4663 } : {}),
      ...(part === 'forward' && l.stub !== undefined ? { sequencer: `${l.stub.ws ? 'ws' : 'http'}://127.0.0.1:${o.stubBase + l.stub.offset}` } : {}),
      ...(part === 'lookup' ? { keyHashes: o.keyHashes } : {}),
      ...(part === 'audit' ? { lines: captured.lines.map(lineFields) } : {}),
    }),
  );
  return { setups, scenarios: setups.map((p) => ({ ...s, name: partName(l.name, p.part), port: p.port })) };
}

// --- the report's arithmetic ------------------------------------------------------------------

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
  /** What remains (txgate − sum) named by stage: each stage's cost less the parts done in it. */
  readonly remains: readonly { readonly stage: string; readonly cost: number; readonly parts: number; readonly rest: number }[];
}

/** The stage each part is done in (the audit lines are written at every exit: the request log's line from the first). */
const STAGE_OF: Record<Part, string> = {
  transport: 'front end',
  envelope: 'size_cap + parse',
  lookup: 'auth',
  decode: 'decode',
  forward: 'forward',
  audit: 'host',
};
const ORDER = ['front end', 'host', 'size_cap + parse', 'route', 'auth', 'grant', 'decode', 'fee', 'rate_limit', 'forward'];

export function limitRow(o: {
  readonly l: LimitScenario;
  readonly txgate: Rounds;
  readonly echo: Rounds;
  readonly parts: ReadonlyMap<Part, Rounds>;
  readonly stages: readonly StageCost[];
  /** The forward stage's cost for a ws:// sequencer (that exit less the rate_limit exit), when measured. */
  readonly wsForward?: number;
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
  const last = ORDER.indexOf(o.l.exit);
  const partsIn = (stage: string) => parts.filter((p) => STAGE_OF[p.part] === stage).reduce((a, p) => a + p.cost, 0);
  const remains: LimitRow['remains'][number][] = [];
  if (o.stages.length > 0) {
    remains.push({ stage: 'front end', cost: echo, parts: partsIn('front end'), rest: echo - partsIn('front end') });
    for (const sc of o.stages) {
      if (ORDER.indexOf(sc.stage) > last) break;
      const cost = sc.stage === 'forward' && o.l.stub?.ws && o.wsForward !== undefined ? o.wsForward : sc.cost;
      remains.push({ stage: sc.stage, cost, parts: partsIn(sc.stage), rest: cost - partsIn(sc.stage) });
    }
    if (o.l.over !== undefined && o.overMedian !== undefined)
      remains.push({ stage: `over "${o.l.over}"`, cost: txgate - o.overMedian, parts: 0, rest: txgate - o.overMedian });
  }
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
