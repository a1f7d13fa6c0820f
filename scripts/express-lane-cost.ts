/**
 * The express lane's cost table in docs/express-lane.md, rendered from the committed
 * bench/results/profile-express-lane.json (one bench:profile run counting the lane's scenarios
 * side by side, this tree against itself): each scenario's instructions per request (median of
 * the run's rounds, and their range), bytes allocated, and the ratio to the same chain
 * configured with no lane.
 */
import { readRun, type ProfileRunDoc } from '../bench/common/results-schema.js';

export const EXPRESS_LANE_RUN = 'profile-express-lane';

/** The reference first, then what is compared with it. */
const ROWS: readonly { readonly scenario: string; readonly what: string }[] = [
  { scenario: 'valid submission, express lane off', what: 'the chain without the lane (the reference)' },
  { scenario: 'valid submission, express lane not ours', what: 'the lane configured, the round nobody’s: the plain path' },
  { scenario: 'valid submission, express lane ours', what: 'the round txgate’s: every submission wrapped' },
  { scenario: 'valid submission', what: 'chain 4663, as every other bench:profile run counts it' },
];

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

export function renderExpressLaneCost(run: ProfileRunDoc = readRun('profile', EXPRESS_LANE_RUN)): string {
  const of = (scenario: string) => run.compared.find((c) => c.scenario === scenario);
  const ref = of(ROWS[0]!.scenario);
  if (ref === undefined) throw new Error(`bench/results/${EXPRESS_LANE_RUN}.json: no result for "${ROWS[0]!.scenario}"`);
  const rows = ROWS.flatMap(({ scenario, what }) => {
    const c = of(scenario);
    if (c === undefined) return [];
    const rounds = c.total.rounds.candidate;
    const kib = c.bytes?.candidate;
    return [
      `| ${what} | ${k(c.total.candidate)} | ${k(Math.min(...rounds))}–${k(Math.max(...rounds))} | ${kib === undefined ? '—' : (kib / 1024).toFixed(2)} | ${(c.total.candidate / ref.total.candidate).toFixed(3)}x |`,
    ];
  });
  return [
    `| configuration (\`${run.requests}\` requests a round, median of ${run.rounds} rounds; recorded ${run.date.slice(0, 10)}, ${run.node}) | instructions / request | rounds | KiB allocated / request | ratio to the chain without the lane |`,
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
