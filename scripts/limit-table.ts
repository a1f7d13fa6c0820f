/**
 * docs/performance.md's bench:limit table, rendered from the committed bench/results/limit.json:
 * per scenario each irreducible part's instructions per request, their sum, txgate, txgate over
 * the sum and over the echo, then what remains of each named by stage.
 */
import { readRun, type LimitRun } from '../bench/common/results-schema.js';
import { limitTables, type LimitRow } from '../bench/limit/report.js';

export function renderLimit(run: LimitRun = readRun('limit', 'limit')): string {
  return [
    `Recorded ${run.date.slice(0, 10)}, ${run.node} \`${run.nodeFlags.join(' ')}\`: median of ${run.rounds} rounds of ${run.requests} requests (${run.warmup} warm-up) a scenario; the echo ${(run.echo.median / 1000).toFixed(1)}k (rounds spread ${(run.echo.spread * 100).toFixed(1)}%).`,
    '',
    ...limitTables(run.rows as readonly LimitRow[]),
  ].join('\n');
}
