/**
 * docs/performance.md's bench:limit table, rendered from the committed bench/results/limit.json:
 * per scenario each irreducible part's instructions per request, their sum, txgate, txgate over
 * the sum and over the echo, then what remains of each named by stage; under them, every
 * measurement whose rounds spread over the run's `maxSpread` (a figure read from them is noisy).
 */
import { readRun, type LimitRun } from '../bench/common/results-schema.js';
import { limitTables, type LimitRow } from '../bench/limit/report.js';

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The measurements of the run whose rounds spread over its `maxSpread`, in one line (empty: none). */
export function noisyLine(run: Pick<LimitRun, 'maxSpread' | 'results'>): string {
  const noisy = run.results.filter((r) => r.spread > run.maxSpread);
  if (noisy.length === 0) return '';
  return `⚠ noisy: rounds spread over ${pct(run.maxSpread)}, so the figures read from them are not steady: ${noisy
    .map((r) => `${r.server} ${r.scenario} ${pct(r.spread)}`)
    .join(', ')}.`;
}

export function renderLimit(run: LimitRun = readRun('limit', 'limit')): string {
  const noisy = noisyLine(run);
  return [
    `Recorded ${run.date.slice(0, 10)}, ${run.node} \`${run.nodeFlags.join(' ')}\`: median of ${run.rounds} rounds of ${run.requests} requests (${run.warmup} warm-up) a scenario, each without the collector's instructions; the echo ${(run.echo.median / 1000).toFixed(1)}k (rounds spread ${pct(run.echo.spread)}).`,
    '',
    ...limitTables(run.rows as readonly LimitRow[]),
    ...(noisy === '' ? [] : ['', noisy]),
  ].join('\n');
}
