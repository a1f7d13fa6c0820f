/**
 * Tracking's cost table in docs/tracking.md, rendered from the committed runs: the three
 * bench:profile runs of a tracked valid submission against the same submission on the tracked
 * chain's twin with tracking off (the runs profile-track-1, -2 and -3 in bench/results/; txgate
 * with two worker threads, every connection held on the worker that does not own the tracker:
 * the hand-off included; the tree against itself, so each figure is counted twice), and
 * bench:track's memory and watcher figures (bench/results/track.json).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_DIR } from '../bench/common/paths.js';
import { readRun, type ProfileRunDoc, type TrackRun } from '../bench/common/results-schema.js';

export const TRACK_COST_RUNS = ['profile-track-1', 'profile-track-2', 'profile-track-3'] as const;
const TRACKED = 'valid submission, tracked chain';
const UNTRACKED = 'valid submission, untracked chain';

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const spread = (xs: readonly number[]) => (Math.max(...xs) - Math.min(...xs)) / median(xs);
/** A bench:track figure's rounds: their spread, flagged past 10%. */
const sp = (xs: readonly number[] = [0]) => `rounds spread ${pct(spread(xs))}${spread(xs) > 0.1 ? ' ⚠ noisy' : ''}`;

export function renderTrackCost(
  runs: readonly ProfileRunDoc[] = TRACK_COST_RUNS.filter((n) => existsSync(join(RESULTS_DIR, `${n}.json`))).map((n) => readRun('profile', n)),
  track: TrackRun = readRun('track', 'track'),
): string {
  const rows: string[] = [];
  const ratios: number[] = [];
  let noisyRuns = 0;
  for (const [i, run] of runs.entries()) {
    const of = (scenario: string) => {
      const c = run.compared.find((x) => x.scenario === scenario);
      if (c === undefined) throw new Error(`bench/results/${TRACK_COST_RUNS[i]}.json: no result for "${scenario}"`);
      // Both builds are this tree: each round counted twice, the two medians' mean is the figure and their gap its noise.
      const all = [...c.total.rounds.base, ...c.total.rounds.candidate];
      return { median: (c.total.base + c.total.candidate) / 2, spread: spread(all) };
    };
    const [t, u] = [of(TRACKED), of(UNTRACKED)];
    const noisy = (m: typeof t) => (m.spread > 0.1 ? ` ⚠ noisy (rounds spread ${pct(m.spread)})` : ` (rounds spread ${pct(m.spread)})`);
    ratios.push(t.median / u.median);
    if (t.spread > 0.1 || u.spread > 0.1) noisyRuns++;
    rows.push(
      `| ${i + 1} (${run.rounds} rounds of ${run.requests}, each counted on two processes; workers ${run.workers ?? 1}, connections on worker ${run.worker ?? 0}) | ${k(u.median)}${noisy(u)} | ${k(t.median)}${noisy(t)} | ${(t.median / u.median).toFixed(3)}x (${t.median >= u.median ? '+' : '−'}${k(Math.abs(t.median - u.median))}) |`,
    );
  }
  const r = median(ratios);
  const lines =
    runs.length === 0
      ? ['(bench:profile: no committed run of the tracked chain against its twin)']
      : [
          `| bench:profile run (recorded ${(runs[0]?.date ?? '').slice(0, 10)}, ${runs[0]?.node}) | untracked chain (the reference): instructions / request | tracked chain | tracked / untracked |`,
          '|---|---|---|---|',
          ...rows,
          `| **median of the ${runs.length} runs** | | | **${r.toFixed(3)}x** (${pct(r - 1)} more; the runs' ratios spread ${pct(spread(ratios))}) |`,
          ...(noisyRuns > 0
            ? [
                '',
                `⚠ ${noisyRuns} of the ${runs.length} runs have rounds spread past their bound: the process's background work counted by each round's wall time (5 to 55 s a round on a loaded host), not the submission's; these ratios do not resolve a difference of a few percent.`,
              ]
            : []),
        ];
  lines.push(
    '',
    `bench:track (recorded ${track.date.slice(0, 10)}, ${track.node}; medians of ${track.rounds} rounds):`,
    '',
    `- memory per tracked transaction (${track.entries.toLocaleString('en')} tracked): ${track.bytesPerEntryTracked} bytes once its sender is known (${sp(track.byRound.bytesPerEntryTracked)}), ${track.bytesPerEntryJustAccepted} just accepted; handed over by another worker thread (the owner's entry, one copy of each account, sequencer and rule kept): ${track.bytesPerEntryHandedTracked} bytes (${sp(track.byRound.bytesPerEntryHandedTracked)}), ${track.bytesPerEntryHandedJustAccepted} just accepted, ${track.bytesPerEntryHandedLongSequencer} with a ${track.longSequencerChars}-character sequencer label (${sp(track.byRound.bytesPerEntryHandedLongSequencer)})`,
    `- the watcher with ${track.pending.toLocaleString('en')} pending: ${track.msPerBlock} ms of the owner's thread per ${track.txsPerBlock.toLocaleString('en')}-transaction block (${sp(track.byRound.msPerBlock)}; ${track.blocks} blocks a round), an idle block ${track.msPerIdleBlock} ms (${sp(track.byRound.msPerIdleBlock)}; ${track.ratioToIdle}x)`,
  );
  if (track.bytesAllocatedPerAcceptance !== null && track.bytesAllocatedPerHandedAcceptance !== null)
    lines.push(
      `- heap bytes one acceptance allocates (${track.allocs.toLocaleString('en')} acceptances less none, no collection in the window): ${track.bytesAllocatedPerAcceptance} on the thread that owns the tracker (${sp(track.byRound.bytesAllocatedPerAcceptance)}), ${track.bytesAllocatedPerHandedAcceptance} handed over by another worker thread (its record in the ring, the owner's reading and entry; ${sp(track.byRound.bytesAllocatedPerHandedAcceptance)})`,
    );
  if (track.instructionsPerAcceptance !== null && track.instructionsPerHandedAcceptance !== null)
    lines.push(
      `- instructions one acceptance adds (callgrind, median of 3): ${k(track.instructionsPerAcceptance)} on the thread that owns the tracker, ${k(track.instructionsPerHandedAcceptance)} handed over by another worker thread (both ends counted)`,
    );
  else lines.push('- instructions per acceptance alone: not counted in this run (`--accepts 0`); the bench:profile runs above count the whole submission');
  return lines.join('\n');
}
