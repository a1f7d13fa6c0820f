/**
 * bench:silence's table (bench/entry/silence.ts writes it; scripts/readme-tables.ts renders the
 * committed run into docs/performance.md): per target the steady p50, the first submission after
 * each silence, the first 20's and the first 100's p50, through txgate and what txgate adds (the
 * same figure of the stub alone taken off, round by round), medians of the rounds; then each
 * txgate's ratios against its steady cost, and the rounds' load averages.
 */
import { noisyNote, round } from './figures.js';
import type { SilenceRun } from './results-schema.js';

/** Rounds of a figure this small spread widely on a shared host: flagged past this. */
export const SILENCE_NOISY = 0.5;

type Fig = SilenceRun['rows'][number]['through']['steady'];
const cell = (f: Fig) => `${f.median}${noisyNote(f.spread, SILENCE_NOISY)}`;
const x = (a: number, b: number) => (b > 0 ? `${round(a / b, 2)}×` : '—');

export function silenceTable(run: SilenceRun): string {
  const head = `| µs, ${run.rounds} rounds of ${run.reps} silences of ${run.silenceS} s${run.phased === true && run.transports.length > 1 ? " in each transport's phase" : ''} (medians of the rounds) | steady p50 | the first after the silence | the first 20, p50 | the first 100, p50 |`;
  const lines = [head, '|---|--:|--:|--:|--:|'];
  for (const r of run.rows) {
    const t = r.through;
    lines.push(
      `| ${r.target}${r.build === null ? '' : ': through txgate'} | ${cell(t.steady)} | ${cell(t.first)} | ${cell(t.first20)} | ${cell(t.first100)} |`,
    );
    if (r.added !== null) {
      const a = r.added;
      lines.push(`| ${r.target}: **what txgate adds** | ${cell(a.steady)} | ${cell(a.first)} | ${cell(a.first20)} | ${cell(a.first100)} |`);
    }
  }
  lines.push('');
  for (const r of run.rows) {
    if (r.added === null) continue;
    const a = r.added;
    lines.push(
      `- ${r.target}: the first after ${run.silenceS} s of silence adds ${x(a.first.median, a.steady.median)} what a steady one adds (rounds: ${a.first.rounds.map((v, i) => x(v, a.steady.rounds[i]!)).join(', ')}); the first 20's p50 adds ${x(a.first20.median, a.steady.median)} (rounds: ${a.first20.rounds.map((v, i) => x(v, a.steady.rounds[i]!)).join(', ')}); through txgate, the first 20's p50 is ${x(r.through.first20.median, r.through.steady.median)} the steady p50.`,
    );
  }
  lines.push(
    '',
    `Recorded ${run.date.slice(0, 10)}, ${run.node}, ${run.cores} cores${run.pinned ? ' (txgate on core 0, the stubs and the client on the other)' : ', not pinned (no taskset)'}; load averages at each round's start: ${run.loadAverages.map((l) => l.join('/')).join('; ')}; the ws:// stub closes a WebSocket with no message for ${run.wsIdleCloseS} s, the HTTP one an idle connection after about 10 s; ${run.clientKeepAliveS > 0 ? `the client keeps each connection alive with an eth_chainId every ${run.clientKeepAliveS} s of a silence (the client kit's default), the last one ${run.clientKeepAliveS} s or less before the first submission` : "no keep-alive from the client: every first after a silence opens a connection (txgate's uWS closes an idle one too)"}; ${run.rehearsalMs === undefined ? '' : run.rehearsalMs > 0 ? `this tree rehearses its submission path every ${run.rehearsalMs} ms of a silence (\`rehearsal.everyMs\`, as a desk sets it; a base build runs its own defaults); ` : "this tree's rehearsal off; "}${run.bad} answers not a 200 with a result. A figure whose rounds spread past ${SILENCE_NOISY * 100}% is flagged.`,
  );
  return lines.join('\n');
}
