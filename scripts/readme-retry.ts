/**
 * The README's retry tables, rendered from the one statement of each rule (RETRY in
 * src/base/reasons.ts) and the reasons that name it: the client contract's retry table (each outcome,
 * the statuses and reasons that are it, and its rule) and the client kit's table (each kind the
 * kit reports, the outcome it is, and what `submitAndWait` does by that rule).
 */
import { REASON_NAMES, REASONS, RETRY, type RetryRule, type SubmissionOutcome } from '../src/base/reasons.js';

const code = (s: string) => `\`${s}\``;

/** One row per retry rule: its outcome, the answers it covers (HTTP status, reasons), the rule. */
export function renderRetry(): string {
  const rows = (Object.keys(RETRY) as RetryRule[]).map((rule) => {
    const reasons = REASON_NAMES.filter((r) => REASONS[r].retry === rule);
    const byStatus = new Map<number, string[]>();
    for (const r of reasons) byStatus.set(REASONS[r].status, [...(byStatus.get(REASONS[r].status) ?? []), code(r)]);
    const answers = rule === 'done' ? '200 with a `result`' : [...byStatus].map(([status, rs]) => `${status} ${rs.join(', ')}`).join('; ');
    return `| ${code(RETRY[rule].outcome)} | ${answers} | ${RETRY[rule].rule} |`;
  });
  return ['| outcome | answers (HTTP status, `data.reason`) | what the client does |', '|---|---|---|', ...rows].join('\n');
}

/**
 * The kinds the client kit reports, and what `submitAndWait` does about each (by its rule); the
 * answers each kind covers are the reasons whose outcome it is (plus what only a client sees).
 */
const KIT: readonly { kind: string; outcome: SubmissionOutcome; also: string; does: string; cap: string }[] = [
  {
    kind: 'accepted',
    outcome: 'accepted',
    also: '200 with a `result`',
    does: 'where the edge tracks the chain, waits on its status (pushed on the lane, polled over HTTP) and reads the receipt once; else polls `eth_getTransactionReceipt` on the chain RPC (100 ms doubling to 2 s)',
    cap: '`timeoutMs` → `timeout`',
  },
  { kind: 'rejected', outcome: 'refused', also: '', does: 'returns it at once', cap: 'none' },
  {
    kind: 'rate_limited',
    outcome: 'not_sent',
    also: '',
    does: 'waits `retryAfterMs` plus up to 20% (so a crowd spreads out), resends the same bytes',
    cap: '`timeoutMs` → `gave_up`',
  },
  {
    kind: 'not_forwarded',
    outcome: 'not_sent',
    also: 'no connection',
    does: 'backs off (100 ms doubling to 2 s, jittered), resends the same bytes',
    cap: '`timeoutMs` → `gave_up`',
  },
  {
    kind: 'uncertain',
    outcome: 'uncertain',
    also: 'a timeout, a lost connection',
    does: 'looks for the hash on the chain RPC (receipt, or pending), resends only the same bytes with backoff',
    cap: '`maxResends` (5), then the receipt decides until `timeoutMs` → `timeout`',
  },
  { kind: 'pending', outcome: 'pending', also: '', does: '`submitSync` returns it; `waitForReceipt` looks the hash up', cap: '—' },
];

export function renderKitOutcomes(): string {
  const rows = KIT.map((k) => {
    const statuses = [
      ...new Set(REASON_NAMES.filter((r) => kitKindOf(RETRY[REASONS[r].retry].outcome, REASONS[r].status) === k.kind).map((r) => REASONS[r].status)),
    ];
    const answers = [...statuses.map(String), ...(k.also === '' ? [] : [k.also])].join(', ');
    return `| ${code(k.kind)} (${answers}) | ${code(k.outcome)} | ${k.does} | ${k.cap} |`;
  });
  return ['| answer | outcome (the retry table) | what `submitAndWait` does | cap |', '|---|---|---|---|', ...rows].join('\n');
}

/** The kit kind (packages/client OUTCOMES) an answer of this outcome and status must be. */
export function kitKindOf(outcome: SubmissionOutcome, status: number): string {
  if (outcome === 'refused') return 'rejected';
  if (outcome === 'not_sent') return status === 429 ? 'rate_limited' : 'not_forwarded';
  return outcome;
}
