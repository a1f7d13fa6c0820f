/**
 * bench:limit's table: which irreducible parts each scenario has, and the parts server's setup
 * built from what txgate answered and logged (the report's arithmetic is bench/limit/report.ts).
 */
import { connect } from 'node:net';
import type { Part, PartSetup } from '../servers/limit-server.js';
import { CHAINS, WS_SEQUENCER, type Scenario } from '../instr/scenarios.js';

export interface LimitScenario {
  readonly name: string;
  /** The parts beyond the transport, in the order a request meets them. */
  readonly parts: readonly Exclude<Part, 'transport'>[];
  /** The stub sequencer it forwards to: its offset from the first stub's port, and ws:// or http://. */
  readonly stub?: { readonly offset: number; readonly ws?: true };
  readonly chainId?: number;
  /** The chain's own work over the plain valid submission (tracking, the lane's check): what remains beyond the stages. */
  readonly over?: string;
}

const SUBMISSION = ['envelope', 'lookup', 'decode', 'floor', 'forward', 'audit'] as const;
export const LIMIT: readonly LimitScenario[] = [
  { name: 'eth_chainId', parts: ['envelope', 'audit'] },
  { name: '401 unauthorized', parts: ['envelope', 'lookup', 'audit'] },
  { name: '402 fee_rejected', parts: ['envelope', 'lookup', 'decode', 'floor', 'audit'] },
  { name: 'valid submission', parts: SUBMISSION, stub: { offset: 0 } },
  { name: WS_SEQUENCER, parts: SUBMISSION, stub: { offset: CHAINS.ws.stub, ws: true }, chainId: CHAINS.ws.chainId },
  {
    name: 'valid submission, tracked chain',
    parts: SUBMISSION,
    stub: { offset: CHAINS.tracked.stub },
    chainId: CHAINS.tracked.chainId,
    over: 'valid submission',
  },
  {
    name: 'valid submission, express lane not ours',
    parts: SUBMISSION,
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
  const withRaws = new Set<Part>(['decode', 'floor', 'forward']);
  const setups = parts.map(
    (part, i): PartSetup => ({
      port: o.port + i,
      part,
      status: captured.status,
      headers: captured.headers,
      body: captured.body,
      ...(withRaws.has(part) ? { raws: raws!, chainId: l.chainId ?? 4663 } : {}),
      ...(part === 'forward' && l.stub !== undefined ? { sequencer: `${l.stub.ws ? 'ws' : 'http'}://127.0.0.1:${o.stubBase + l.stub.offset}` } : {}),
      ...(part === 'lookup' ? { keyHashes: o.keyHashes } : {}),
      ...(part === 'audit' ? { lines: captured.lines.map(lineFields) } : {}),
    }),
  );
  return { setups, scenarios: setups.map((p) => ({ ...s, name: partName(l.name, p.part), port: p.port })) };
}
