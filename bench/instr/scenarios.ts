/**
 * bench:instr's scenarios: the requests each one sends, the status every answer must have, and
 * txgate's configuration and accounts that serve them. A table, nothing measured here.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { keccak256 } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { tippedTransfer } from '../common/transfers.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { initCrypto } from '../../src/base/native.js';
import { TXGATE_CLI } from '../common/paths.js';

await initCrypto();

export interface Scenario {
  readonly name: string;
  /** The status every measured answer must have (a scenario that measures something else is an error). */
  readonly status: number;
  readonly bodies: readonly string[];
  readonly headers: Record<string, string>;
  readonly host?: string;
  /**
   * Over the WebSocket transport: one connection (authenticated at its upgrade with the scenario's
   * key, opened once before the warm-up) with `--connections` frames in flight, in place of that
   * many HTTP connections with one request each. An answer's status is its data.status (200 for
   * a result).
   */
  readonly ws?: true;
  /** Requests sent to this port rather than the server's (bench:limit's parts server: a port per part). */
  readonly port?: number;
  /**
   * With txgate on several threads and the connections held on a worker other than 0: a request
   * sent after each round on a connection held on worker 0, answered before the round's count
   * ends: the tracked chain's status of the round's last transaction (body `settle(i)`, i its
   * index). Worker 0 owns the tracker and reads what the others hand it when it needs it
   * (docs/tracking.md#the-hand-off): the status makes it read every acceptance of the round inside
   * the round, so that none is left to the next one or out of every round.
   */
  readonly settle?: (i: number) => string;
  /** The host a `settle` request names, where not the scenario's (a reference that asks the tracked chain the same question). */
  readonly settleHost?: string;
  /**
   * The i-th request's body where every request of a run must be a new transaction however many
   * rounds it has (the tracked chain's: a repeated hash is tracked once, and a run of 24 warm-up
   * rounds of 400 outlasts any fixed pool): `bodies` first, then more made as the rounds need them.
   */
  readonly body?: (i: number) => string;
}

export const keys = {
  load: 'txg_instr_' + randomBytes(24).toString('base64url'),
  listed: 'txg_instr_listed_' + randomBytes(24).toString('base64url'),
  otherChain: 'txg_instr_other_' + randomBytes(24).toString('base64url'),
  limited: 'txg_instr_limited_' + randomBytes(24).toString('base64url'),
  sync: 'txg_instr_sync_' + randomBytes(24).toString('base64url'),
};
const senders = Array.from({ length: 16 }, () => '0x' + randomBytes(32).toString('hex'));
const outsider = '0x' + randomBytes(32).toString('hex');
export const MIN_TIP = 1_000_000_000_000n;
const tx = (i: number, o: { value?: bigint; to?: string; key?: string; chainId?: number } = {}) =>
  tippedTransfer(o.key ?? senders[i % senders.length]!, Math.floor(i / senders.length), { chainId: o.chainId, value: o.value ?? MIN_TIP, to: o.to });

const rpc = (method: string, params: unknown[], id: number | string = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

/**
 * The chains beside 4663, each with its own host and stub sequencer (at the stub port + `stub`):
 * the sync send in receipt mode, a ws:// sequencer, a tracked chain, and chain 4663's express
 * lane configured twice, with a round nobody holds and with one txgate's controller holds.
 */
export const CHAINS = {
  receipt: { chainId: 4664, host: 'receipt.localhost', stub: 1 },
  ws: { chainId: 4665, host: 'ws-sequencer.localhost', stub: 2 },
  tracked: { chainId: 4666, host: 'tracked.localhost', stub: 3 },
  laneNotOurs: { chainId: 4667, host: 'lane.localhost', stub: 4 },
  laneOurs: { chainId: 4668, host: 'lane-held.localhost', stub: 5 },
  laneOff: { chainId: 4669, host: 'bare.localhost', stub: 6 },
  // Conditional submissions (docs/conditional.md) off and on, the chains otherwise the same (hosts as long).
  conditionsOff: { chainId: 4670, host: 'cond-off.localhost', stub: 7 },
  conditionsOn: { chainId: 4671, host: 'cond-on.localhost', stub: 8 },
  // The tracked chain's twin with tracking off (a host as long, a chain RPC, the grant): its reference.
  untracked: { chainId: 4672, host: 'untrack.localhost', stub: 9 },
} as const;

/** The controller key txgate holds where its express lane is on (a bench key), and its address (what an auction naming it returns). */
export const LANE_KEY = `0x${'42'.repeat(32)}` as const;
export const LANE_CONTROLLER = privateKeyToAddress(LANE_KEY).toLowerCase();

export const POOL = 512;
const pool = (chainId?: number, length = POOL, method = 'eth_sendRawTransaction') =>
  Array.from({ length }, (_, i) => rpc(method, [tx(i, chainId === undefined ? {} : { chainId })], i));
const valid = pool();
const JSON_CT = { 'content-type': 'application/json' };
const sub = (key: string, bodies: readonly string[]): Pick<Scenario, 'bodies' | 'headers'> => ({ bodies, headers: { ...JSON_CT, 'x-api-key': key } });
const untipped = [rpc('eth_sendRawTransaction', [tx(0, { value: 0n, to: '0x3333333333333333333333333333333333333333' })])];
const WRONG_KEY = 'txg_wrong_key_0000000000000000000000000000000';
// Every tracked submission is a new transaction (a repeated hash is tracked once): a pool made
// up front, then more as a run needs them (`body`), whatever its rounds and requests.
const TRACKED_POOL = 8192;
const trackedPool = pool(CHAINS.tracked.chainId, TRACKED_POOL);
const untrackedPool = pool(CHAINS.untracked.chainId, TRACKED_POOL);
/** `bodies`, then submissions of chain `chainId` made as they are first asked for (the i-th, nonce and sender as `pool`'s): never one twice. */
const endless = (bodies: readonly string[], chainId: number) => {
  const more: string[] = [];
  return (i: number): string => {
    if (i < bodies.length) return bodies[i]!;
    while (bodies.length + more.length <= i) {
      const k = bodies.length + more.length;
      more.push(rpc('eth_sendRawTransaction', [tx(k, { chainId })], k));
    }
    return more[i - bodies.length]!;
  };
};
const trackedBody = endless(trackedPool, CHAINS.tracked.chainId);

/** The main scenarios (echo: its one answer; floor: the contract's; txgate: all). */
export const MAIN: readonly Scenario[] = [
  { name: 'eth_chainId', status: 200, bodies: [rpc('eth_chainId', [])], headers: JSON_CT },
  { name: '401 unauthorized', status: 401, ...sub(WRONG_KEY, [valid[0]!]) },
  { name: '402 fee_rejected', status: 402, ...sub(keys.load, untipped) },
  { name: 'valid submission', status: 200, ...sub(keys.load, valid) },
  { name: 'valid submission, sender-listed grant', status: 200, ...sub(keys.listed, valid) },
  // The same submission forwarded to a ws:// sequencer (frames on persistent connections, no HTTP head either way).
  { name: 'valid submission to a WebSocket sequencer', status: 200, host: CHAINS.ws.host, ...sub(keys.load, pool(CHAINS.ws.chainId)) },
  // The same submission where the chain tracks it: the acceptance's entry in the status table on top.
  {
    name: 'valid submission, tracked chain',
    status: 200,
    host: CHAINS.tracked.host,
    ...sub(keys.load, trackedPool),
    body: trackedBody,
    settle: (i) => rpc('txgate_getTransactionStatus', [keccak256(JSON.parse(trackedBody(i)).params[0] as `0x${string}`)]),
  },
  // Its reference: the same submission on a chain configured as the tracked one, tracking off.
  {
    name: 'valid submission, untracked chain',
    status: 200,
    host: CHAINS.untracked.host,
    ...sub(keys.load, untrackedPool),
    body: endless(untrackedPool, CHAINS.untracked.chainId),
    // The same question to the owner after each round (the tracked chain's status of a transaction
    // it holds, with nothing new to read): the reference carries the question's own cost too, so
    // the difference is the hand-off and the owner's reading alone.
    settle: () => rpc('txgate_getTransactionStatus', [keccak256(JSON.parse(trackedBody(0)).params[0] as `0x${string}`)]),
    settleHost: CHAINS.tracked.host,
  },
  // The stub answers with the receipt at once: the sync path's own cost.
  { name: 'sync submission', status: 200, ...sub(keys.sync, pool(undefined, POOL, 'eth_sendRawTransactionSync')) },
  {
    name: 'sync submission (receipt mode)',
    status: 200,
    host: CHAINS.receipt.host,
    ...sub(keys.sync, pool(CHAINS.receipt.chainId, POOL, 'eth_sendRawTransactionSync')),
  },
  { name: 'eth_chainId over WebSocket', status: 200, ws: true, ...sub(keys.load, [rpc('eth_chainId', [])]) },
  { name: 'valid submission over WebSocket', status: 200, ws: true, ...sub(keys.load, valid) },
  // The valid submission on a chain whose express lane is configured: its auction names nobody's
  // controller for the round (the plain forward, with the lane's check on top), then txgate's (every submission wrapped).
  { name: 'valid submission, express lane not ours', status: 200, host: CHAINS.laneNotOurs.host, ...sub(keys.load, pool(CHAINS.laneNotOurs.chainId)) },
  // Their reference: a chain configured as theirs (a host as long, a chain RPC, the grant) with no lane.
  { name: 'valid submission, express lane off', status: 200, host: CHAINS.laneOff.host, ...sub(keys.load, pool(CHAINS.laneOff.chainId)) },
  { name: 'valid submission, express lane ours', status: 200, host: CHAINS.laneOurs.host, ...sub(keys.load, pool(CHAINS.laneOurs.chainId)) },
  // A plain submission on a chain with conditional submissions off, and on (nothing of them may look at it);
  // then the conditional method with empty options on that chain (the same transactions).
  { name: 'valid submission, conditions off', status: 200, host: CHAINS.conditionsOff.host, ...sub(keys.load, pool(CHAINS.conditionsOff.chainId)) },
  { name: 'valid submission, conditions on', status: 200, host: CHAINS.conditionsOn.host, ...sub(keys.load, pool(CHAINS.conditionsOn.chainId)) },
  {
    name: 'conditional submission, empty options',
    status: 200,
    host: CHAINS.conditionsOn.host,
    ...sub(
      keys.load,
      Array.from({ length: POOL }, (_, i) => rpc('eth_sendRawTransactionConditional', [tx(i, { chainId: CHAINS.conditionsOn.chainId }), {}], i)),
    ),
  },
];
/** The scenarios the floor serves (the contract's four). */
export const FLOOR = new Set(['eth_chainId', '401 unauthorized', '402 fee_rejected', 'valid submission']);
/** The scenarios that need their chain (and its stub) configured, by scenario. */
export const CHAIN_OF: Readonly<Record<string, keyof typeof CHAINS>> = {
  'valid submission to a WebSocket sequencer': 'ws',
  'valid submission, tracked chain': 'tracked',
  'valid submission, untracked chain': 'untracked',
  'sync submission (receipt mode)': 'receipt',
  'valid submission, express lane not ours': 'laneNotOurs',
  'valid submission, express lane ours': 'laneOurs',
  'valid submission, express lane off': 'laneOff',
  'valid submission, conditions off': 'conditionsOff',
  'valid submission, conditions on': 'conditionsOn',
  'conditional submission, empty options': 'conditionsOn',
};

/** txgate's requests that exit at each stage, in the pipeline's order (the last one forwards). */
export const STAGES: readonly (Scenario & { stage: string; same?: string })[] = [
  // No body: a refusal before the body is read closes its connection, which would be measured too.
  { stage: 'host', name: 'exit at host (421, no body)', status: 421, host: 'unknown.example', bodies: [''], headers: JSON_CT },
  // Valid JSON refused by the envelope check: the parse stage's whole work (a body that is not
  // JSON costs its SyntaxError on top, a cost no passing request pays).
  {
    stage: 'size_cap + parse',
    name: 'exit at parse (400 invalid_request)',
    status: 400,
    bodies: ['{"jsonrpc":"1.0","id":1,"method":"eth_chainId"}'],
    headers: JSON_CT,
  },
  { stage: 'route', name: 'exit at route (400 method_not_found)', status: 400, bodies: [rpc('eth_getBalance', [])], headers: JSON_CT },
  { stage: 'auth', name: 'exit at auth (401)', same: '401 unauthorized', status: 401, ...sub(WRONG_KEY, [valid[0]!]) },
  { stage: 'grant', name: 'exit at grant (403 chain_not_granted)', status: 403, ...sub(keys.otherChain, [valid[0]!]) },
  { stage: 'decode', name: 'exit at decode (400 invalid_transaction)', status: 400, ...sub(keys.load, [rpc('eth_sendRawTransaction', ['0x02c3010203'])]) },
  { stage: 'fee', name: 'exit at fee (402)', same: '402 fee_rejected', status: 402, ...sub(keys.load, untipped) },
  { stage: 'rate_limit', name: 'exit at rate_limit (429)', status: 429, ...sub(keys.limited, valid) },
  { stage: 'forward', name: 'forwarded (200)', same: 'valid submission', status: 200, ...sub(keys.load, valid) },
];
/** The sender stage recovers the sender only for a grant with an allow-list: measured apart, over the fee exit. */
export const SENDER: Scenario = {
  name: 'exit at sender, listed grant (403 sender_not_allowed)',
  status: 403,
  ...sub(keys.listed, [rpc('eth_sendRawTransaction', [tx(0, { key: outsider })])]),
};
export const WS_SEQUENCER = 'valid submission to a WebSocket sequencer';

const grant = { chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: MIN_TIP.toString() };

/**
 * The accounts: the load key (chain 4663's lane granted with --express-lane, the lane chains'
 * with their scenarios), a sender-listed one, one of another chain, a rate-limited one, a sync one.
 */
export function accounts(lane4663: boolean, laneChains: boolean, conditionChains = false, untracked = false) {
  return {
    accounts: [
      {
        id: 'load',
        keySha256: [keySha256(keys.load)],
        grants: [
          { ...grant, ...(lane4663 ? { expressLane: true } : {}) },
          { ...grant, chainId: CHAINS.ws.chainId },
          { ...grant, chainId: CHAINS.tracked.chainId },
          ...(untracked ? [{ ...grant, chainId: CHAINS.untracked.chainId }] : []),
          ...(laneChains ? [CHAINS.laneNotOurs, CHAINS.laneOurs, CHAINS.laneOff].map((c) => ({ ...grant, chainId: c.chainId, expressLane: true })) : []),
          ...(conditionChains ? [CHAINS.conditionsOff, CHAINS.conditionsOn].map((c) => ({ ...grant, chainId: c.chainId, conditional: true })) : []),
        ],
      },
      { id: 'listed', keySha256: [keySha256(keys.listed)], grants: [{ ...grant, senders: senders.map((k) => privateKeyToAddress(k as `0x${string}`)) }] },
      { id: 'other-chain', keySha256: [keySha256(keys.otherChain)], grants: [{ ...grant, chainId: 10 }] },
      { id: 'limited', keySha256: [keySha256(keys.limited)], grants: [{ ...grant, rateLimit: { perSecond: 1e-9, burst: 1 } }] },
      { id: 'sync', keySha256: [keySha256(keys.sync)], grants: [grant, { ...grant, chainId: CHAINS.receipt.chainId }].map((g) => ({ ...g, sync: true })) },
    ],
  };
}

/** What --express-lane and --express-lane-held give chain 4663, and the lane chains have. */
export interface TxgateSetup {
  /** The first stub sequencer's port (chain 4663's); each other chain's is this + its `stub`. */
  readonly stub: number;
  readonly port: number;
  /** Chain 4663's express lane on (--express-lane, --express-lane-held). */
  readonly lane4663: boolean;
  /** The other chains configured (those of the scenarios measured). */
  readonly chains: ReadonlySet<keyof typeof CHAINS>;
  /** txgate's worker threads (default 1: the thread that listens serves). */
  readonly workers?: number;
  /** The build's CLI (dist/src/cli.js; default: this tree's): a build with keep-warm gets it off. */
  readonly cli?: string;
}

/**
 * Whether the build of `cli` keeps its sequencer connections warm (src/upstreams/keep-warm.ts):
 * its idle probes are then turned off, since one landing in a counted round would count in it
 * (an older build refuses the field, so it is set only where known).
 */
export function keepsWarm(cli: string): boolean {
  return existsSync(join(dirname(cli), 'upstreams', 'keep-warm.js'));
}

/** The key file every configured express lane reads (its name in txgate's directory). */
export const LANE_KEY_FILE = 'controller.key';

/**
 * The express lane of a chain whose stub answers the auction's reads. Polled once a minute: the
 * auction's reads (every 250 ms by default: ~1.7M instructions a second here, the idle figure)
 * are background work, not a submission's. Each read may take a minute: txgate's first reads, at
 * its start under callgrind, take longer than the default second.
 */
const expressLane = (dir: string, stub: string) => ({
  rpc: stub,
  expressLane: {
    enabled: true,
    auction: `0x${'ab'.repeat(20)}`,
    endpoint: stub,
    keyFile: join(dir, LANE_KEY_FILE),
    marginMs: 0,
    pollMs: 60_000,
    staleMs: 600_000,
    timeoutMs: 60_000,
  },
});

/** A chain's forward settings, and probes off the measured rounds. */
const FORWARD_SETTINGS = { connections: 64, timeoutMs: 30_000, queueMs: 30_000 };
// Probes off the measured rounds: one a second would count in each round by its wall time, and
// under callgrind on a busy host a 1-s timeout marks the stub down (503).
const PROBE = { intervalMs: 600_000, timeoutMs: 60_000 };

/** txgate's config (one thread unless `workers` says, dedup off, metrics on, logs at info) in `dir`. */
export function txgateConfig(o: TxgateSetup, dir: string): Record<string, unknown> {
  const FORWARD = keepsWarm(o.cli ?? TXGATE_CLI) ? { ...FORWARD_SETTINGS, keepWarm: { idleMs: 0 } } : FORWARD_SETTINGS;
  const stub = (n = 0) => `http://127.0.0.1:${o.stub + n}`;
  const extra = {
    receipt: {
      sequencers: [stub(CHAINS.receipt.stub)],
      rpc: stub(CHAINS.receipt.stub),
      forward: FORWARD,
      probe: PROBE,
      sync: { enabled: true, mode: 'receipt', receiptTtlMs: 0 },
    },
    tracked: {
      sequencers: [stub(CHAINS.tracked.stub)],
      rpc: stub(CHAINS.tracked.stub),
      forward: FORWARD,
      probe: PROBE,
      // The watcher off the measured rounds as the probes are (its first pass at start, then once a minute).
      track: { enabled: true, pollMs: 60_000, stallMs: 600_000 },
    },
    ws: { sequencers: [`ws://127.0.0.1:${o.stub + CHAINS.ws.stub}`], forward: { ...FORWARD, wsConnections: 2 }, probe: PROBE },
    laneNotOurs: { sequencers: [stub(CHAINS.laneNotOurs.stub)], forward: FORWARD, probe: PROBE, ...expressLane(dir, stub(CHAINS.laneNotOurs.stub)) },
    laneOurs: { sequencers: [stub(CHAINS.laneOurs.stub)], forward: FORWARD, probe: PROBE, ...expressLane(dir, stub(CHAINS.laneOurs.stub)) },
    laneOff: { sequencers: [stub(CHAINS.laneOff.stub)], forward: FORWARD, probe: PROBE, rpc: stub(CHAINS.laneOff.stub) },
    // Both with a chain RPC; the head poll off the measured rounds as the probes are.
    conditionsOff: { sequencers: [stub(CHAINS.conditionsOff.stub)], forward: FORWARD, probe: PROBE, rpc: stub(CHAINS.conditionsOff.stub) },
    conditionsOn: {
      sequencers: [stub(CHAINS.conditionsOn.stub)],
      forward: FORWARD,
      probe: PROBE,
      rpc: stub(CHAINS.conditionsOn.stub),
      conditional: { enabled: true, headPollMs: 60_000 },
    },
    untracked: { sequencers: [stub(CHAINS.untracked.stub)], rpc: stub(CHAINS.untracked.stub), forward: FORWARD, probe: PROBE },
  };
  // The chains in the order they have always been written (the config's order is the hosts' table's).
  const order: (keyof typeof CHAINS)[] = ['receipt', 'tracked', 'ws', 'laneNotOurs', 'laneOurs', 'laneOff', 'conditionsOff', 'conditionsOn', 'untracked'];
  return {
    listen: { host: '127.0.0.1', port: o.port },
    // With several workers the internal listener's readiness refresh asks each of them for a
    // snapshot of its metrics every 250 ms: background work, counted by wall time (under callgrind
    // most of a round's instructions), and not a request's: off, as the probes are.
    internal: (o.workers ?? 1) > 1 ? { enabled: false } : { host: '127.0.0.1', port: o.port + 1 },
    workers: o.workers ?? 1,
    crypto: { signature: 'curve' },
    log: { level: 'info' },
    dedup: { acceptedTtlMs: 0 },
    // The lane on, for its scenarios (it adds a GET / upgrade route; POST / is as without it).
    websocket: { enabled: true, maxInFlight: 1024 },
    chains: [
      {
        chainId: 4663,
        hosts: ['127.0.0.1', 'localhost'],
        sequencers: [stub()],
        forward: FORWARD,
        probe: PROBE,
        // No receipt held for resends (the pool repeats), as dedup is off.
        sync: { enabled: true, receiptTtlMs: 0 },
        ...(o.lane4663 ? expressLane(dir, stub()) : {}),
      },
      ...order.filter((c) => o.chains.has(c)).map((c) => ({ chainId: CHAINS[c].chainId, hosts: [CHAINS[c].host], ...extra[c] })),
    ],
  };
}
