/**
 * The results JSON the benches write into bench/results/ and scripts/readme-perf.ts reads back:
 * one typed interface per kind of run, the writer the benches use, and a reader that checks a
 * file's shape against its kind and names the file and the path of the first field that does not
 * fit ("bench/results/load.json: throughput.0.ratio is not a number"). Each interface lists the
 * fields a reader relies on; a run may record more (its settings, raw samples) beside them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_DIR } from './paths.js';

// --- the kinds of run ------------------------------------------------------------------------------

export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
}
/** bench:load (load.json). */
export interface LoadRun {
  readonly node: string;
  readonly date: string;
  readonly cores?: number;
  readonly loadAverage?: readonly number[];
  readonly duration: number;
  readonly connections: number;
  readonly logLevel: string;
  readonly throughput: readonly { readonly scenario: string; readonly ratio: number; readonly ratios: readonly number[] }[];
  readonly latency: readonly { readonly placement: string; readonly direct: Percentiles; readonly added: Percentiles }[];
  readonly sync: readonly {
    readonly scenario: string;
    readonly ratios?: readonly number[];
    readonly plain?: { readonly rps: number };
    readonly cpuRatio?: number;
  }[];
  readonly rate?: {
    readonly rate: number;
    readonly rows: readonly {
      readonly path: string;
      readonly p50: number;
      readonly p99: number;
      readonly p999: number;
      readonly added?: Percentiles & { readonly p999: number };
      readonly gc?: { readonly minor: number; readonly major: number };
    }[];
  };
}

/** bench:ws (ws.json). */
export interface WsRun {
  readonly node: string;
  readonly date: string;
  readonly seconds: number;
  readonly rounds: number;
  readonly inFlight: number;
  readonly throughput: readonly { readonly scenario: string; readonly cpuRatios: readonly number[]; readonly rpsRatios: readonly number[] }[];
  readonly latency: { readonly rate: number; readonly direct: Percentiles; readonly viaHttp: Percentiles; readonly viaWs: Percentiles };
}

/** bench:sync (sync-1s.json, sync-0.25s.json). */
export interface SyncRun {
  readonly node: string;
  readonly date: string;
  readonly trials: number;
  readonly blockTimeS: number;
  readonly rows: readonly { readonly flow: string; readonly minusSyncMs: number; readonly requestsPerTx: number }[];
}

/** npm run bench's tinybench suites (latest.json). */
export interface MicroRun {
  readonly node: string;
  readonly date: string;
  readonly rows: readonly { readonly suite: string; readonly task: string; readonly medianUs: number; readonly ratio: number | null }[];
}
/** bench:fleet (fleet-LABEL.json). */
export interface FleetRun {
  readonly cli: string;
  readonly seconds: number;
  readonly results: readonly { readonly phase: string; readonly p50Ms: number; readonly p99Ms: number }[];
}
/** bench:fleet-stall (fleet-stall.json). */
export interface FleetStallRun {
  readonly seconds: number;
  readonly rounds: number;
  readonly edges: readonly { readonly label: string; readonly cli: string }[];
  readonly store: readonly { readonly mode: string }[];
}
/** dist/bench/entry/pre-auth-memory.js (pre-auth-memory.json). */
export interface PreAuthMemoryRun {
  readonly connections: number;
  readonly phases: readonly { readonly phase: string; readonly rssPeakMiB: number }[];
}
/** bench:track (track.json). */
export interface TrackRun {
  readonly node: string;
  readonly date: string;
  readonly rounds: number;
  readonly entries: number;
  /** Bytes per entry (medians): its sender known, just accepted; handed over by another worker thread, the same two. */
  readonly bytesPerEntryTracked: number;
  readonly bytesPerEntryJustAccepted: number;
  readonly bytesPerEntryHandedTracked: number;
  readonly bytesPerEntryHandedJustAccepted: number;
  /** Handed over, its sender known, with a sequencer label of `longSequencerChars` characters (a provider's URL with its key). */
  readonly bytesPerEntryHandedLongSequencer: number;
  readonly longSequencerChars: number;
  readonly pending: number;
  readonly txsPerBlock: number;
  readonly blocks: number;
  /** ms of the thread per block (medians): with `txsPerBlock` transactions, and idle. */
  readonly msPerBlock: number;
  readonly msPerIdleBlock: number;
  readonly ratioToIdle: number;
  /** Acceptances in the allocation count's window (0: not measured), and the heap bytes one allocates (medians): on the owner, handed over. */
  readonly allocs: number;
  readonly bytesAllocatedPerAcceptance: number | null;
  readonly bytesAllocatedPerHandedAcceptance: number | null;
  readonly instructionsPerAcceptance: number | null;
  readonly instructionsPerHandedAcceptance: number | null;
  /** Every round's figure, by the name of the median it gives. */
  readonly byRound: Readonly<Record<string, readonly number[]>>;
}

/** bench:silence (silence.json): one figure over rounds, µs. */
export interface SilenceFigure {
  readonly median: number;
  readonly rounds: readonly number[];
  readonly spread: number;
}
export interface SilenceFigures {
  readonly steady: SilenceFigure;
  readonly first: SilenceFigure;
  readonly first20: SilenceFigure;
  readonly first100: SilenceFigure;
}
/** bench:silence (silence.json): each target's figures through it, and what each txgate adds to the stub alone. */
export interface SilenceRun {
  readonly node: string;
  readonly date: string;
  readonly cores: number;
  readonly pinned: boolean;
  readonly silenceS: number;
  readonly reps: number;
  readonly rounds: number;
  readonly warmup: number;
  readonly steady: number;
  readonly burst: number;
  readonly wsIdleCloseS: number;
  /** Seconds between the client's keep-alive calls in a silence (0: none). */
  readonly clientKeepAliveS: number;
  /** This tree's `rehearsal.everyMs` (0: off; absent in runs before the rehearsal). */
  readonly rehearsalMs?: number;
  /** Each transport measured in a phase of its own in every round (absent: all at once, in runs before). */
  readonly phased?: boolean;
  readonly logLevel: string;
  /** With --base: the other build's commit. */
  readonly base: string | null;
  readonly transports: readonly string[];
  readonly loadAverages: readonly (readonly number[])[];
  readonly bad: number;
  readonly rows: readonly {
    readonly target: string;
    /** null: the stub alone (the reference). */
    readonly build: string | null;
    readonly transport: string | null;
    readonly through: SilenceFigures;
    readonly added: SilenceFigures | null;
  }[];
}

/** bench:limit (limit.json): each scenario's irreducible parts beside txgate. */
export interface LimitRun {
  readonly node: string;
  readonly date: string;
  readonly requests: number;
  readonly warmup: number;
  readonly rounds: number;
  readonly maxSpread: number;
  readonly nodeFlags: readonly string[];
  readonly echo: { readonly median: number; readonly spread: number };
  readonly rows: readonly {
    readonly scenario: string;
    readonly parts: readonly { readonly part: string; readonly cost: number }[];
    readonly sum: number;
    readonly txgate: number;
    readonly ratio: number;
    readonly echoRatio: number;
    readonly remains: readonly { readonly stage: string; readonly cost: number; readonly parts: number; readonly rest: number }[];
  }[];
  /** The echo's and the parts server's figures of each scenario, without the rounds. */
  readonly results: readonly {
    readonly server: string;
    readonly scenario: string;
    readonly median: number;
    readonly min: number;
    readonly max: number;
    readonly spread: number;
  }[];
}

/** The CI guard's base and tolerances (guard.json; bench/guard/verdict.ts's GuardFile). */
export interface GuardRun {
  readonly commit: string;
  readonly date: string;
  readonly scenarios: Readonly<
    Record<string, { readonly tolerance: number; readonly noise: { readonly runs: number; readonly ratios: readonly number[]; readonly worst: number } }>
  >;
  readonly parts?: Readonly<Record<string, { readonly floor: number; readonly worst: number; readonly runs: number }>>;
}

/** bench:alloc (alloc.json): heap bytes per request of each build and scenario, txgate started plain. */
export interface AllocRun {
  readonly node: string;
  readonly date: string;
  readonly rounds: number;
  readonly results: readonly {
    readonly scenario: string;
    readonly build: string;
    readonly median: number;
    readonly rounds: readonly number[];
    readonly spread: number;
  }[];
}

/** bench:profile's figures (bench/profile/verdict.ts computes them): a part or a total, base against candidate. */
export type Direction = 'same' | 'dearer' | 'cheaper';

export interface Figure {
  /** Medians of each build's rounds, instructions per request. */
  readonly base: number;
  readonly candidate: number;
  /** The median of the paired differences (candidate − base). */
  readonly delta: number;
  /** This run's noise for it: the wider of the two builds' spreads (max − min). */
  readonly noise: number;
  /** The smallest difference that is flagged (floor). */
  readonly floor: number;
  readonly verdict: Direction;
  /** How the verdict was reached, in words. */
  readonly why: string;
  /** Each build's rounds. */
  readonly rounds: { readonly base: readonly number[]; readonly candidate: readonly number[] };
}

export interface Compared {
  readonly scenario: string;
  /** Round pairs counted, and of them those left out for compiling or collecting in them. */
  readonly pairs: number;
  readonly leftOut: number;
  /** The parts in order: the stages (pipeline order), the answer, outside. */
  readonly parts: readonly (Figure & { readonly part: string })[];
  readonly total: Figure & { readonly ratio: number; readonly tolerance: number | null };
  /** The parts' medians added up, against the total's median, per build (each within a couple of percent: medians of sums are not sums of medians). */
  readonly sum: { readonly base: number; readonly candidate: number };
  /** The collector's instructions per request (left out of every part and total), and what the probes cost (taken off). */
  readonly gc: { readonly base: number; readonly candidate: number };
  readonly probes: { readonly base: number; readonly candidate: number };
  readonly bytes?: { readonly base: number; readonly candidate: number; readonly ratio: number; readonly tolerance: number | null; readonly pass: boolean };
  /** What fails the guard: the total, a stage's name, or 'bytes'. */
  readonly failed: readonly string[];
}

/** bench:profile (profile.json): both builds' parts per scenario. */
export interface ProfileRun {
  readonly date: string;
  readonly node: string;
  readonly base: { readonly ref: string; readonly commit: string };
  readonly candidate: { readonly commit: string; readonly dirty: boolean };
  readonly requests: number;
  readonly warmup: number;
  readonly rounds: number;
  readonly guard: boolean;
  /** With --workers: txgate's worker threads, and the one every HTTP connection was held on. */
  readonly workers?: number;
  readonly worker?: number;
  /** With --echo: the bare uWS echo's eth_chainId, instructions per request (median of its rounds). */
  readonly echo?: number;
  readonly compared: readonly Compared[];
}
export type ProfileRunDoc = ProfileRun;

export interface Runs {
  readonly profile: ProfileRunDoc;
  readonly alloc: AllocRun;
  readonly load: LoadRun;
  readonly ws: WsRun;
  readonly sync: SyncRun;
  readonly micro: MicroRun;
  readonly fleet: FleetRun;
  readonly 'fleet-stall': FleetStallRun;
  readonly 'pre-auth-memory': PreAuthMemoryRun;
  readonly track: TrackRun;
  readonly limit: LimitRun;
  readonly guard: GuardRun;
  readonly silence: SilenceRun;
}
export type Kind = keyof Runs;

/** The kind of a results file, by its name (without .json). */
export function kindOf(name: string): Kind {
  if (name === 'alloc') return 'alloc';
  if (name.startsWith('profile')) return 'profile';
  if (name.startsWith('sync')) return 'sync';
  if (name.startsWith('fleet-stall')) return 'fleet-stall';
  if (name.startsWith('fleet-')) return 'fleet';
  if (name === 'latest') return 'micro';
  if (name.startsWith('silence')) return 'silence';
  if (name === 'load' || name === 'ws' || name === 'pre-auth-memory' || name === 'track' || name === 'limit' || name === 'guard') return name;
  throw new Error(`bench/results/${name}.json: no kind of run by that name`);
}

// --- writing ---------------------------------------------------------------------------------------

/** A run's JSON text, as every bench writes it (two-space indented, a newline at the end). */
export function resultsJson<K extends Kind, T extends Runs[K]>(_kind: K, doc: T): string {
  return JSON.stringify(doc, null, 2) + '\n';
}

// --- reading ---------------------------------------------------------------------------------------

type Path = readonly (string | number)[];
/** Checks a value at a path; throws with the path's first misfit. */
type Check = (v: unknown, path: Path, fail: (path: Path, what: string) => never) => void;

const num: Check = (v, p, fail) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(p, 'is not a number');
};
/** A number, or null where a figure was not measured. */
const numOrNull: Check = (v, p, fail) => {
  if (v !== null) num(v, p, fail);
};
const str: Check = (v, p, fail) => {
  if (typeof v !== 'string') fail(p, 'is not a string');
};
const list =
  (item: Check): Check =>
  (v, p, fail) => {
    if (!Array.isArray(v)) fail(p, 'is not a list');
    for (const [i, x] of (v as unknown[]).entries()) item(x, [...p, i], fail);
  };
const record =
  (value: Check): Check =>
  (v, p, fail) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(p, 'is not an object');
    for (const [k, x] of Object.entries(v as object)) value(x, [...p, k], fail);
  };
/** An object with these fields; a field in `optional` may be absent. */
const obj =
  (fields: Record<string, Check>, optional: readonly string[] = []): Check =>
  (v, p, fail) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(p, 'is not an object');
    for (const [k, check] of Object.entries(fields)) {
      const o = v as Record<string, unknown>;
      if (!(k in o)) {
        if (optional.includes(k)) continue;
        fail([...p, k], '');
      }
      check(o[k], [...p, k], fail);
    }
  };

const percentiles = obj({ p50: num, p99: num });
/** A nullable value: null, or what `check` accepts. */
const orNull =
  (check: Check): Check =>
  (v, p, fail) => {
    if (v !== null) check(v, p, fail);
  };
const bool: Check = (v, p, fail) => {
  if (typeof v !== 'boolean') fail(p, 'is not a boolean');
};
const silenceFigure = obj({ median: num, rounds: list(num), spread: num });
const silenceFigures = obj({ steady: silenceFigure, first: silenceFigure, first20: silenceFigure, first100: silenceFigure });
const figure = obj({
  base: num,
  candidate: num,
  delta: num,
  noise: num,
  floor: num,
  verdict: str,
  why: str,
  rounds: obj({ base: list(num), candidate: list(num) }),
});
const SHAPES: Record<Kind, Check> = {
  profile: obj({
    date: str,
    node: str,
    base: obj({ ref: str, commit: str }),
    candidate: obj({ commit: str }),
    requests: num,
    warmup: num,
    rounds: num,
    compared: list(
      obj(
        {
          scenario: str,
          parts: list(figure),
          total: figure,
          sum: obj({ base: num, candidate: num }),
          gc: obj({ base: num, candidate: num }),
          bytes: obj({ base: num, candidate: num, ratio: num }),
        },
        ['bytes'],
      ),
    ),
  }),
  load: obj(
    {
      node: str,
      date: str,
      cores: num,
      loadAverage: list(num),
      duration: num,
      connections: num,
      logLevel: str,
      throughput: list(obj({ scenario: str, ratio: num, ratios: list(num) })),
      latency: list(obj({ placement: str, direct: percentiles, added: percentiles })),
      sync: list(obj({ scenario: str, ratios: list(num), plain: obj({ rps: num }), cpuRatio: num }, ['ratios', 'plain', 'cpuRatio'])),
      rate: obj({
        rate: num,
        rows: list(
          obj({ path: str, p50: num, p99: num, p999: num, added: obj({ p50: num, p99: num, p999: num }), gc: obj({ minor: num, major: num }) }, [
            'added',
            'gc',
          ]),
        ),
      }),
    },
    ['cores', 'loadAverage', 'rate'],
  ),
  ws: obj({
    node: str,
    date: str,
    seconds: num,
    rounds: num,
    inFlight: num,
    throughput: list(obj({ scenario: str, cpuRatios: list(num), rpsRatios: list(num) })),
    latency: obj({ rate: num, direct: percentiles, viaHttp: percentiles, viaWs: percentiles }),
  }),
  sync: obj({ node: str, date: str, trials: num, blockTimeS: num, rows: list(obj({ flow: str, minusSyncMs: num, requestsPerTx: num })) }),
  micro: obj({ node: str, date: str, rows: list(obj({ suite: str, task: str, medianUs: num, ratio: numOrNull })) }),
  fleet: obj({ cli: str, seconds: num, results: list(obj({ phase: str, p50Ms: num, p99Ms: num })) }),
  'fleet-stall': obj({ seconds: num, rounds: num, edges: list(obj({ label: str, cli: str })), store: list(obj({ mode: str })) }),
  'pre-auth-memory': obj({ connections: num, phases: list(obj({ phase: str, rssPeakMiB: num })) }),
  track: obj({
    node: str,
    date: str,
    rounds: num,
    entries: num,
    bytesPerEntryTracked: num,
    bytesPerEntryJustAccepted: num,
    bytesPerEntryHandedTracked: num,
    bytesPerEntryHandedJustAccepted: num,
    bytesPerEntryHandedLongSequencer: num,
    longSequencerChars: num,
    pending: num,
    txsPerBlock: num,
    blocks: num,
    msPerBlock: num,
    msPerIdleBlock: num,
    ratioToIdle: num,
    allocs: num,
    bytesAllocatedPerAcceptance: numOrNull,
    bytesAllocatedPerHandedAcceptance: numOrNull,
    instructionsPerAcceptance: numOrNull,
    instructionsPerHandedAcceptance: numOrNull,
    byRound: record(list(num)),
  }),
  alloc: obj({ node: str, date: str, rounds: num, results: list(obj({ scenario: str, build: str, median: num, rounds: list(num), spread: num })) }),
  guard: obj(
    {
      commit: str,
      date: str,
      scenarios: record(obj({ tolerance: num, noise: obj({ runs: num, ratios: list(num), worst: num }) })),
      parts: record(obj({ floor: num, worst: num, runs: num })),
    },
    ['parts'],
  ),
  silence: obj(
    {
      node: str,
      date: str,
      cores: num,
      pinned: bool,
      silenceS: num,
      reps: num,
      rounds: num,
      warmup: num,
      steady: num,
      burst: num,
      wsIdleCloseS: num,
      clientKeepAliveS: num,
      logLevel: str,
      base: orNull(str),
      transports: list(str),
      loadAverages: list(list(num)),
      bad: num,
      rows: list(obj({ target: str, build: orNull(str), transport: orNull(str), through: silenceFigures, added: orNull(silenceFigures) })),
      rehearsalMs: num,
    },
    ['rehearsalMs'],
  ),
  limit: obj({
    node: str,
    date: str,
    requests: num,
    warmup: num,
    rounds: num,
    maxSpread: num,
    nodeFlags: list(str),
    echo: obj({ median: num, spread: num }),
    rows: list(
      obj({
        scenario: str,
        parts: list(obj({ part: str, cost: num })),
        sum: num,
        txgate: num,
        ratio: num,
        echoRatio: num,
        remains: list(obj({ stage: str, cost: num, parts: num, rest: num })),
      }),
    ),
    results: list(obj({ server: str, scenario: str, median: num, min: num, max: num, spread: num })),
  }),
};

/**
 * A run's parsed JSON checked against its kind: the typed run, or an error naming the file and
 * the first field that does not fit.
 */
export function parseRun<K extends Kind>(kind: K, name: string, doc: unknown): Runs[K] {
  SHAPES[kind](doc, [], (path, what) => {
    throw new Error(`bench/results/${name}.json: ${what === '' ? `no ${path.join('.')}` : `${path.length > 0 ? `${path.join('.')} ` : ''}${what}`}`);
  });
  return doc as Runs[K];
}

/** A committed run by its name in bench/results/ (without .json), read and checked. */
export function readRun<K extends Kind>(kind: K, name: string, dir = RESULTS_DIR): Runs[K] {
  return parseRun(kind, name, JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')));
}
