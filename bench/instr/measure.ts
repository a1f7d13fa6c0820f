/**
 * bench:instr's measuring: warm-up rounds, then measured rounds of every scenario of a server
 * interleaved round by round, noisy or misanswered rounds measured again, each scenario summed up
 * as the median of its rounds; and bytes allocated per request on a server started plain.
 */
import { median, round } from '../common/figures.js';
import { noisyRounds, spread } from '../common/figures.js';
import { gcOf, type Callgrind, type Server } from './callgrind.js';
import { answered, type Driver } from './drive.js';
import type { Scenario } from './scenarios.js';

export interface Round {
  /** Answers counted, instructions, of which in the garbage collector. */
  readonly n: number;
  readonly perReq: number;
  /** Its wall time (background work, timers among it, is counted by it). */
  readonly seconds: number;
  /** TurboFan's compilations in the round, per request: left out of perReq (a function tiering up is a one-time cost). */
  readonly jitPerReq: number;
  readonly gcIr: number;
  /** The round's own work per request: without its compilations and its collections (gcByAllocation). */
  readonly bare: number;
  readonly scavenges: number;
  readonly majors: number;
  /** The answers by status when not all had the scenario's (a cold or starved server: 503, 502). */
  readonly unexpected?: string;
}

export interface Measured {
  readonly server: string;
  readonly scenario: string;
  /** Median instructions per request of the measured rounds, and their spread. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** (max − min) / median, after any re-measured rounds. */
  readonly spread: number;
  /** Rounds measured again for being beyond the bound (their first figures are dropped). */
  readonly remeasured: number;
  /** GC instructions per request over every measured round (a mean: collections come in spikes). */
  readonly gcPerReq: number;
  readonly scavengesPer10k: number;
  readonly majorsPer10k: number;
  readonly rounds: readonly Round[];
}

export interface Settings {
  /** Requests per round, warm-up and measured rounds per scenario. */
  readonly requests: number;
  readonly warmup: number;
  readonly rounds: number;
  /** The bound on a scenario's rounds' spread (a fraction of the median), and how often rounds beyond it are measured again. */
  readonly maxSpread: number;
  readonly retries: number;
  /**
   * A round in which TurboFan compiled more than this share of its count (jitPerReq / perReq) ran
   * partly in a lower tier: measured again like a noisy round (bench:limit, the CI guard; unset: never).
   */
  readonly maxJit?: number;
  /**
   * The warm-up rounds interleaved as the measured ones are (round r of every scenario side by
   * side), so that the code has seen every scenario's types before the first measured round:
   * warmed one scenario after another, each later scenario's types deoptimized what the earlier
   * ones had compiled, and it compiled again in the measured rounds (bench:limit, the CI guard).
   */
  readonly interleaveWarmup?: boolean;
  /**
   * The measured rounds' order turned round every other round (A B, B A, A B, ...: round r of
   * every scenario still side by side). Rounds in a fixed order that fill the young generation
   * about once per pass put every scavenge, and the work it leaves in its round, in the same
   * scenario's rounds run after run; turned round, a collection that comes once per pass falls
   * in each scenario's rounds alike (bench:instr).
   */
  readonly alternate?: boolean;
  /** Seconds each server is measured idle after its measured rounds (0: not). */
  readonly idleS: number;
}

/** What the measuring says as it goes (the console lines are the report's). */
export interface Progress {
  idle(server: string, perSecond: number, seconds: number): void;
  measured(m: Measured): void;
  /** A line on stderr: rounds done, rounds measured again. */
  note(line: string): void;
  /** A reference scenario left out of the run for misanswering (said on stdout). */
  leftOut(what: string, line: string): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Measure {
  /** Each server's instructions per second while idle (its timers and background work). */
  readonly idle = new Map<string, { perSecond: number }>();

  constructor(
    private readonly o: Settings,
    private readonly cg: Callgrind,
    private readonly driver: Driver,
    private readonly progress: Progress,
  ) {}

  /** One measured round of `s`: the requests between callgrind_control -z and -d. */
  async oneRound(server: Server, s: Scenario): Promise<Round> {
    await this.driver.prepare(server.port);
    this.cg.control('-z', server.child.pid!);
    const gcFrom = server.gc.length;
    const t = performance.now();
    const statuses = await this.driver.drive(server.port, s, this.o.requests);
    this.cg.control('-d', server.child.pid!);
    const seconds = (performance.now() - t) / 1000;
    await sleep(50); // the round's last GC line
    const unexpected = [...statuses].some(([code]) => code !== s.status) ? JSON.stringify(Object.fromEntries(statuses)) : undefined;
    const n = answered(statuses);
    const { ir, gcIr, jitIr } = this.cg.readDump(server);
    const g = gcOf(server.gc.slice(gcFrom));
    return {
      n,
      // Without the JIT's compilations: a one-time cost per function, not per request.
      perReq: (ir - jitIr) / n,
      jitPerReq: jitIr / n,
      bare: (ir - jitIr - gcIr) / n,
      seconds,
      gcIr,
      scavenges: g.scavenges,
      majors: g.majors,
      ...(unexpected !== undefined ? { unexpected } : {}),
    };
  }

  /**
   * The scenarios of one server: warm-up rounds of each, then the measured rounds with the
   * scenarios interleaved round by round (round r of every scenario side by side, which the
   * per-stage differences pair). A scenario whose rounds spread more than the bound has the rounds
   * beyond the band measured again, up to `retries` times; if it still spreads more, it says so.
   */
  async set(server: Server, scenarios: readonly Scenario[]): Promise<Measured[]> {
    const { o, cg } = this;
    const pid = server.child.pid!;
    if (o.interleaveWarmup === true) for (let i = 0; i < o.warmup; i++) for (const s of scenarios) await this.driver.drive(server.port, s, o.requests);
    else for (const s of scenarios) for (let i = 0; i < o.warmup; i++) await this.driver.drive(server.port, s, o.requests);
    cg.control('--instr=on', pid);
    const rounds = scenarios.map((): Round[] => []);
    const order = scenarios.map((_, i) => i);
    for (let r = 0; r < o.rounds; r++) {
      for (const i of o.alternate === true && r % 2 === 1 ? [...order].reverse() : order) rounds[i]!.push(await this.oneRound(server, scenarios[i]!));
      this.progress.note(`${server.name}: round ${r + 1}/${o.rounds} of ${scenarios.length} scenarios`);
    }
    // One at a time: a round counts every instruction of the process.
    const out: Measured[] = [];
    for (const [i, s] of scenarios.entries()) {
      const rs = rounds[i]!;
      let remeasured = 0;
      // A round with an answer of another status measured something else: it is measured again
      // too (at least twice), and the run fails if it keeps happening.
      for (let attempt = 0; attempt < Math.max(o.retries, 2); attempt++) {
        const per = withMeanGc(rs).map((x) => x.perReq);
        const wrong = rs.flatMap((x, j) => (x.unexpected !== undefined ? [j] : []));
        const jitty = o.maxJit === undefined || attempt >= o.retries ? [] : rs.flatMap((x, j) => (x.jitPerReq > o.maxJit! * x.perReq ? [j] : []));
        const noisy = attempt < o.retries ? [...noisyRounds(per, o.maxSpread), ...jitty] : [];
        const again = [...new Set([...wrong, ...noisy])].sort((a, b) => a - b);
        if (again.length === 0) break;
        this.progress.note(
          `${server.name} / ${s.name}: ${wrong.length > 0 ? `answers not all ${s.status} (${rs[wrong[0]!]!.unexpected})` : `rounds spread ${pct(spread(per))}${jitty.length > 0 ? `, ${jitty.length} compiling` : ''}`}: measuring round${again.length > 1 ? 's' : ''} ${again.map((j) => j + 1).join(', ')} again`,
        );
        for (const j of again) rs[j] = await this.oneRound(server, s);
        remeasured += again.length;
      }
      const wrong = rs.find((x) => x.unexpected !== undefined);
      if (wrong !== undefined) {
        const what = `${server.name} / ${s.name}: expected every answer ${s.status}, got ${wrong.unexpected}`;
        // txgate's figures are the point of the run; a reference that misanswers is left out, said.
        if (server.name === 'txgate') throw new Error(what);
        this.progress.leftOut(`${server.name} / ${s.name} (answers ${wrong.unexpected})`, `${what} after re-measuring: LEFT OUT of this run`);
        continue;
      }
      const m = summarise(server.name, s.name, withMeanGc(rs), remeasured);
      this.progress.measured(m);
      out.push(m);
    }
    if (o.idleS > 0) await this.idleRate(server);
    return out;
  }

  /**
   * The server's instructions per second while idle, once its rounds are measured: measured
   * between the warm-up and the rounds, the idle seconds outlasted the upstreams' keep-alive (the
   * stub's uWS closes an HTTP connection idle for 10 s), so the first measured rounds ran code the
   * closing had deoptimized and compiled it again (counted per thread: TurboFan compiling 40-445k
   * instructions a request on the serving thread in the rounds after it, none without it).
   */
  private async idleRate(server: Server): Promise<void> {
    const { cg } = this;
    const pid = server.child.pid!;
    cg.control('-z', pid);
    const t = performance.now();
    await sleep(this.o.idleS * 1000);
    cg.control('-d', pid);
    const seconds = (performance.now() - t) / 1000;
    const { ir } = cg.readDump(server);
    this.idle.set(server.name, { perSecond: ir / seconds });
    this.progress.idle(server.name, ir / seconds, seconds);
  }

  /**
   * Bytes allocated per request: 20,000 requests after 2,000 to warm up, on a server started
   * plain; counted from the first collection in the round to the last (whole young generations).
   */
  async allocation(server: Server, s: Scenario): Promise<number> {
    await this.driver.drive(server.port, s, 2_000);
    const from = server.gc.length;
    let answers = 0;
    let at = -1;
    // Requests between the first and the last collection of the round: load in slices of 500.
    for (let i = 0; i < 40; i++) {
      const statuses = await this.driver.drive(server.port, s, 500);
      await sleep(5);
      if (at < 0 && server.gc.length > from) at = server.gc.length;
      else if (at >= 0) answers += answered(statuses);
    }
    const lines = server.gc.slice(at);
    if (at < 0 || lines.length === 0) return Number.NaN;
    return gcOf(lines, server.gc[at - 1]).allocated / answers;
  }
}

/**
 * Each round's count with its collections (Heap::CollectGarbage, inclusive) replaced by the
 * scenario's mean per request: a scavenge lands in whichever round fills the young generation
 * (3-5k per request in a 2,000-request eth_chainId round that holds one, none in the next), so
 * the rounds are compared on their own work, each carrying the same share of the collections.
 */
function withMeanGc(rs: readonly Round[]): Round[] {
  const n = rs.reduce((a, r) => a + r.n, 0);
  const mean = rs.reduce((a, r) => a + r.gcIr, 0) / n;
  return rs.map((r) => ({ ...r, perReq: r.perReq - r.gcIr / r.n + mean }));
}

/**
 * A server's scenarios with its collections attributed by the bytes each scenario allocates
 * (`bytesOf`: per request, measured apart), not by the rounds they fell in: every round's own
 * work (`bare`) plus the server's collection instructions per byte, over all its scenarios'
 * rounds, times the scenario's bytes. Scenarios measured side by side share one young
 * generation: with rounds of 400 and a young generation that fills every two of them, every
 * scavenge can fall in one scenario's rounds run after run (the tracked chain's against its
 * untracked twin: 2.6M instructions in each of its rounds, none in the other's), and a scenario's
 * own mean would charge it all. Null where a scenario's bytes are not known (the means stand).
 */
export function gcByAllocation(ms: readonly Measured[], bytesOf: (m: Measured) => number): Measured[] | null {
  const bytes = ms.map(bytesOf);
  if (ms.length === 0 || bytes.some((b) => !Number.isFinite(b) || b <= 0)) return null;
  let gc = 0;
  let allocated = 0;
  ms.forEach((m, i) => {
    for (const r of m.rounds) {
      gc += r.gcIr;
      allocated += r.n * bytes[i]!;
    }
  });
  const perByte = gc / allocated;
  return ms.map((m, i) => {
    const rounds = m.rounds.map((r) => ({ ...r, perReq: r.bare + perByte * bytes[i]! }));
    return { ...summarise(m.server, m.scenario, rounds, m.remeasured), gcPerReq: perByte * bytes[i]! };
  });
}

function summarise(server: string, scenario: string, rounds: readonly Round[], remeasured: number): Measured {
  const per = rounds.map((r) => r.perReq);
  const all = rounds.reduce((a, r) => a + r.n, 0);
  const total = (f: 'scavenges' | 'majors' | 'gcIr') => rounds.reduce((a, r) => a + r[f], 0) / all;
  return {
    server,
    scenario,
    median: median(per),
    min: Math.min(...per),
    max: Math.max(...per),
    spread: spread(per),
    remeasured,
    gcPerReq: total('gcIr'),
    scavengesPer10k: total('scavenges') * 10_000,
    majorsPer10k: total('majors') * 10_000,
    rounds,
  };
}

/** A fraction as a percentage with one decimal. */
export const pct = (x: number) => `${round(x * 100, 1)}%`;
