/**
 * Every field of the configuration, declared once (docs/design.md §2.1), with the readers of
 * config-fields.ts: the sections of the parts (the `accounts` section by the account layer,
 * accounts/config.ts; `expressLane` and `listen.tls` by theirs) composed here, and the rules
 * between one chain's fields. Validation (config.ts), the Config type and the table in
 * docs/operations.md all come from these declarations.
 */
import { availableParallelism } from 'node:os';
import { ACCOUNTS } from '../accounts/config.js';
import { bool, choices, custom, int, list, oneOf, type Section, str, type Values } from '../base/config-fields.js';
import { got, type Reader } from '../base/config-reader.js';
import { checkExpressLane, EXPRESS_LANE } from '../express-lane/config.js';
import { CONDITIONAL } from '../conditional/config.js';
import { checkFlashblocks, FLASHBLOCKS } from '../flashblocks/config.js';
import { LOG_LEVELS, type LogLevel } from '../log/log.js';
import { SECP256K1_BINDINGS, type Secp256k1Binding } from '../base/native.js';
import { schemesText, upstreamUrl } from '../upstreams/registry.js';
import { TLS } from '../tls/config.js';

export type ForwardStrategy = 'failover' | 'fanout';

/**
 * How the signature of an EIP-1559 (0x02) transaction is checked (tx/decoder.ts): `recover`
 * recovers the sender's public key; `curve` (the default) makes every check recovery makes but
 * the last (r and s in range, low s, y-parity 0 or 1, r the x-coordinate of a curve point) and
 * recovers the sender only when something asks for it. They differ only on a signature built on
 * purpose so that the recovered point is at infinity, which no signer produces and the
 * sequencer refuses.
 */
export type SignatureCheck = 'recover' | 'curve';
export const SIGNATURE_CHECKS: readonly SignatureCheck[] = ['recover', 'curve'];

/** Forks whose transaction rules the decoder knows (@ethereumjs/common names). */
export const HARDFORKS = ['london', 'paris', 'shanghai', 'cancun', 'prague', 'osaka'] as const;

/** A hostname as the Host header carries it: lower case, no port, no scheme, no path. */
const HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;
/** A `hosts` entry as the host table holds it (lower case), or undefined when it is no bare hostname. */
export const hostnameOf = (h: unknown): string | undefined => (typeof h === 'string' && HOSTNAME.test(h.toLowerCase()) ? h.toLowerCase() : undefined);

/** An optional URL of `schemes` (null when not set). */
const optionalUrl = (allowed: string, doc: string, schemes: readonly string[], problem: string) =>
  custom<string | null>(allowed, 'none', doc, (r, v, path) => {
    if (v === undefined) return null;
    const u = urlOf(v, schemes);
    if (u === undefined) r.problems.push(`${path}: ${problem}`);
    return u ?? null;
  });

/** One chain: its hosts, its sequencers and how a submission is forwarded to them. */
const CHAIN = {
  chainId: int(0, 1, Number.MAX_SAFE_INTEGER, 'the chain id (`eth_chainId` answers it)', { required: true, allowed: 'a positive integer, once per chain' }),
  hardfork: oneOf<string>(HARDFORKS, 'prague', 'whose transaction rules apply (an @ethereumjs/common hardfork name)'),
  hosts: custom<readonly string[]>(
    'a non-empty array of hostnames',
    'required',
    'hostnames bound to the chain (Host header, port stripped, case-insensitive); others get 421',
    (r, v, path) => {
      const hosts: string[] = [];
      if (!Array.isArray(v) || v.length === 0)
        r.problems.push(`${path}: must be a non-empty array of hostnames, ${Array.isArray(v) ? 'got an empty one' : got(v)}`);
      else
        v.forEach((h: unknown, j: number) => {
          const host = hostnameOf(h);
          if (host === undefined) r.problems.push(`${path}[${j}]: must be a bare hostname (no scheme, port or path), ${got(h)}`);
          else hosts.push(host);
        });
      return hosts;
    },
  ),
  sequencers: custom<readonly string[]>(
    `a non-empty array of URLs (${schemesText()})`,
    'required',
    'the sequencers, in failover order (credentials in an http URL become Basic auth; logs show only scheme://host:port); a `ws://`/`wss://` sequencer is called over persistent WebSocket connections with the same outcome rules',
    (r, v, path) => {
      const sequencers: string[] = [];
      if (!Array.isArray(v) || v.length === 0) r.problems.push(`${path}: must be a non-empty array of URLs (${schemesText()})`);
      else
        v.forEach((s: unknown, j: number) => {
          const u = upstreamUrl(s);
          if (u === undefined) r.problems.push(`${path}[${j}]: must be a URL whose scheme is ${schemesText()}`);
          else sequencers.push(u);
        });
      return sequencers;
    },
  ),
  rpc: optionalUrl(
    'an http(s) URL',
    "the chain's own RPC, read for receipts by the sync `receipt` mode (required there)",
    ['http:', 'https:'],
    'must be an http:// or https:// URL',
  ),
  rpcWs: optionalUrl(
    'a ws(s) URL',
    "the chain RPC's WebSocket: the `receipt` mode asks for receipts on each new head instead of every `sync.pollMs`",
    ['ws:', 'wss:'],
    'must be a ws:// or wss:// URL',
  ),
  forward: {
    strategy: oneOf<ForwardStrategy>(['failover', 'fanout'], 'failover', 'the sequencers one after another, or all at once ([design.md §5](design.md#s5))'),
    timeoutMs: int(2000, 10, 60000, 'per-attempt timeout, from the moment the request is written'),
    maxInFlight: int(1024, 1, 1_000_000, 'forwards in flight for the chain, per thread; beyond it 503 `overloaded` at once'),
    connections: int(
      128,
      1,
      1024,
      'keep-alive connections per sequencer, per thread: requests written at once (a `ws(s)://` sequencer: calls in flight at once)',
    ),
    queueMs: int(1000, 1, 60_000, 'how long a forward may wait for a free connection; past it 503 `overloaded`, not sent'),
    wsConnections: int(
      2,
      1,
      64,
      'WebSocket connections kept open per `ws(s)://` sequencer, per thread: many calls in flight on each, answers by id, pings every 10 s, reopened 0.1 s doubling to 5 s',
    ),
    /** Connections open and proven through silences (src/upstreams/keep-warm.ts; docs/operations.md, "Keep-warm"). */
    keepWarm: {
      idleMs: int(
        2000,
        0,
        600_000,
        "a sequencer connection idle this long (up to 1.5 times it) gets an `eth_chainId` probe, so the sequencer's idle close never takes it and the first submission after a silence finds it open and proven; set it under the sequencer's idle timeout; 0: off",
      ),
      connections: int(
        2,
        1,
        64,
        'connections per sequencer, per thread, kept open and proven (opened at start, reopened in the background when the sequencer closes one); a probe waits while it would leave a submission without a proven connection',
      ),
    },
  },
  probe: {
    intervalMs: int(1000, 50, 600_000, 'period of the sequencer health probe (`eth_chainId`)'),
    timeoutMs: int(1000, 10, 60_000, 'timeout of the health probe'),
  },
  /** eth_sendRawTransactionSync (EIP-7966): off unless a deployment turns it on (src/sync/). */
  sync: {
    enabled: bool(false, 'serve `eth_sendRawTransactionSync` on this chain (off: 400 `method_not_found`)'),
    maxWaitMs: int(2000, 1, 60_000, "the longest a sync call waits for its receipt; a client's timeout is capped by it"),
    mode: oneOf<'forward' | 'receipt'>(
      ['forward', 'receipt'],
      'forward',
      '`forward`: the sync method goes to the sequencer; `receipt`: the plain send, then the receipt from `chains[].rpc` (on each new head where `rpcWs` is set, else every `pollMs`)',
    ),
    syncTimeoutFormat: oneOf<'number' | 'hex' | 'omit'>(
      ['number', 'hex', 'omit'],
      'number',
      'how the wait is sent: `number` (EIP, Erigon), `hex` (Nitro, Bor, viem), `omit` (the transaction alone, e.g. anvil)',
    ),
    maxWaiting: int(
      256,
      1,
      1024,
      'sync calls waiting at once for the chain, per thread, each on a connection of its own; beyond it 503 `overloaded`, not sent',
    ),
    pollMs: int(100, 10, 5_000, '`receipt` mode: the interval between receipt requests to the chain RPC while no head subscription is live'),
    receiptTtlMs: int(60_000, 0, 600_000, 'how long a receipt answered is kept to answer a resend of the same bytes without a forward (0: not kept)'),
  },
  /** Timeboost's express lane (src/express-lane/): off unless a deployment turns it on. */
  expressLane: EXPRESS_LANE,
  /** eth_sendRawTransactionConditional (ERC-7796; src/conditional/): off unless a deployment turns it on. */
  conditional: CONDITIONAL,
  /** The builder's flashblocks stream (src/flashblocks/): off unless a deployment turns it on (docs/flashblocks.md). */
  flashblocks: FLASHBLOCKS,
  /** Following accepted transactions to their block (src/track/): off unless a deployment turns it on (docs/tracking.md). */
  track: {
    enabled: bool(
      false,
      'follow every transaction accepted on this chain to its block and serve `txgate_getTransactionStatus` (needs `rpc`; off: 400 `method_not_found`)',
    ),
    dropAfterBlocks: int(20, 1, 100_000, 'blocks a pending transaction waits before the chain is asked whether it still knows it (with `dropAfterMs`, both)'),
    dropAfterMs: int(
      30_000,
      0,
      86_400_000,
      'how long a pending transaction waits before the chain is asked whether it still knows it (with `dropAfterBlocks`, both)',
    ),
    keepMs: int(600_000, 1_000, 86_400_000, 'how long a final state (included, reverted, replaced, dropped) stays answerable'),
    maxTracked: int(
      100_000,
      1,
      10_000_000,
      'transactions tracked at once, per process; the oldest final ones go first; full of pending ones, a new acceptance is not tracked (the submission is unaffected)',
    ),
    pollMs: int(1000, 50, 60_000, 'how often the chain RPC is asked for new blocks while no head subscription (`rpcWs`) is live'),
    reorgDepth: int(64, 1, 1024, 'blocks remembered to find the common ancestor of a reorg; a deeper one re-checks every tracked transaction'),
    stallMs: int(30_000, 1_000, 600_000, 'a watcher pass that has not finished in this long is abandoned and the watcher restarted (`/ready` says so)'),
    maxLagBlocks: int(
      32,
      1,
      100_000,
      "the watcher's head more than this many blocks behind the chain's after a pass is a stall: restarted within this many blocks of the chain's head (`/ready` says so)",
    ),
    maxSubscriptions: int(16, 1, 1024, 'WebSocket transport: `transactionStatus` subscriptions per connection'),
  },
} satisfies Section;

/** The rules between one chain's fields. */
function checkChain(r: Reader, c: Values<typeof CHAIN>, raw: Record<string, unknown>, f: string): void {
  if (c.sync.mode === 'receipt' && raw.rpc === undefined)
    r.problems.push(`${f}.rpc: required by sync.mode "receipt" (the chain RPC the receipts are read from)`);
  checkExpressLane(r, c.expressLane, raw.rpc !== undefined, f);
  if (c.track.enabled && raw.rpc === undefined) r.problems.push(`${f}.rpc: required by track.enabled (the chain RPC the blocks are read from)`);
  checkFlashblocks(r, c.flashblocks, c.track.enabled || (c.sync.enabled && c.sync.mode === 'receipt'), f);
}

/** uWS counts idle time in 4-second ticks and needs at least 8 s (0 turns the timeout off). */
const idleTicks = (v: number) => (v !== 0 && (v < 8 || v % 4 !== 0) ? 'must be 0 (never) or a multiple of 4 from 8 to 960' : null);

/**
 * Every field of the configuration, declared once: validation reads it, and the table in
 * docs/operations.md is rendered from it. Every field has a default except `chains`.
 */
export const CONFIG = {
  listen: {
    host: str('0.0.0.0', "the public listener's address"),
    port: int(8080, 0, 65535, "the public listener's port (0: any free port)"),
    tls: TLS,
  },
  internal: {
    enabled: bool(true, 'the internal listener (metrics, health and readiness mirrors); never expose it publicly'),
    host: str('127.0.0.1', "the internal listener's address"),
    port: int(9464, 0, 65535, "the internal listener's port"),
  },
  limits: {
    maxBodyBytes: int(65536, 512, 65536, 'request body cap; over it: 413, unread'),
    chainIdMaxBodyBytes: int(512, 64, 512, 'body cap of `eth_chainId` (at most `maxBodyBytes`)'),
    // Bodies being read, every thread together (http/body-budget.ts): 64 MiB holds 1,024 bodies at the cap.
    maxBufferedBodyBytes: int(
      64 * 1024 * 1024,
      65536,
      1024 * 1024 * 1024,
      'bodies being read at once, every thread of the process together; a body that does not fit: 503 `overloaded`, unread',
    ),
  },
  allowUntipped: bool(false, "the deployment's permission for untipped plain transfers (the account's is needed too)"),
  chains: list(CHAIN, 'chain', 'the chains served, each with the fields below', checkChain),
  accounts: ACCOUNTS,
  log: {
    level: custom<LogLevel>(choices(LOG_LEVELS), '`info`', 'log level; env `TXGATE_LOG_LEVEL` overrides it', (r, v, _path, ctx) => {
      const env = ctx.env.TXGATE_LOG_LEVEL;
      return r.oneOf<LogLevel>(env ?? v, env === undefined ? 'log.level' : 'TXGATE_LOG_LEVEL', 'info', LOG_LEVELS);
    }),
  },
  shutdown: { graceMs: int(10_000, 0, 600_000, 'how long requests in flight may finish after SIGTERM') },
  workers: int(defaultWorkers, 1, 256, 'uWS worker threads sharing the port', { shown: 'number of cores' }),
  metrics: { enabled: bool(true, 'Prometheus metrics on the internal listener') },
  profiling: { serverTiming: bool(false, 'add a `Server-Timing` header with per-stage durations') },
  tipAddresses: { maxAgeSeconds: int(60, 0, 86_400, '`Cache-Control` max-age of `GET /tip-addresses`') },
  dedup: {
    acceptedTtlMs: int(5000, 0, 600_000, 'how long an accepted hash is answered without a second forward (0 disables)'),
    maxEntries: int(100_000, 1, 10_000_000, 'bound on remembered hashes'),
  },
  crypto: {
    secp256k1: oneOf<Secp256k1Binding>(
      SECP256K1_BINDINGS,
      'npm',
      'which libsecp256k1 recovers signatures: `npm` (prebuilt in the `secp256k1` package) or `system` (see below)',
    ),
    signature: oneOf<SignatureCheck>(
      SIGNATURE_CHECKS,
      'curve',
      "how an EIP-1559 signature is checked: `curve` (every check recovery makes but the last, without recovering; the sender is recovered only for a grant's sender allow-list) or `recover` (the sender's key is always recovered); see below",
    ),
  },
  busyPoll: bool(
    false,
    'spin a nice-19 thread beside each server thread while traffic flows, so the core never idles (see below); it parks after 1 s without requests; refused under a CPU quota (cgroup `cpu.max`, Kubernetes CPU limits), which a spinner would spend',
  ),
  /** The submission path rehearsed through a silence (src/rehearsal/; docs/performance.md, "A silence that costs nothing"). */
  rehearsal: {
    everyMs: int(
      0,
      0,
      60_000,
      'each server thread idle this long runs one rehearsal: a submission of its own through its whole path (a private loopback port, every stage, the forward to a sink of its own in place of a sequencer; nothing logged, counted or sent), so the first order after a silence finds the path as warm as the thousandth; a desk sets 10 (measured: about 6-8% of a core per idle thread, nothing while traffic flows); 0: off (see below)',
    ),
  },
  /** The WebSocket transport on the public port (src/ws/): off unless a deployment turns it on (docs/design.md §6.1). */
  websocket: {
    enabled: bool(false, 'the WebSocket transport on `GET /` (see [Extensions](#extensions))'),
    maxInFlight: int(256, 1, 65_536, 'requests in flight per connection; beyond it a frame is answered 503 `overloaded`, nothing sent'),
    maxConnectionsPerAccount: int(
      16,
      1,
      10_000,
      'open connections per account, per edge process (counted across its worker threads); beyond it the upgrade is 429 `too_many_connections`',
    ),
    idleTimeoutSeconds: int(60, 0, 960, 'no frame either way for this long closes a connection; the server pings before it (0: never)', {
      allowed: 'integer, 0 or a multiple of 4 from 8 to 960',
      check: idleTicks,
    }),
    maxBackpressureBytes: int(
      4 << 20,
      64 << 10,
      1 << 30,
      'answer bytes a connection may leave unread: past half, new frames are `overloaded`; past all, the connection is closed 1013 (its requests in flight unanswered, logged)',
    ),
  },
} satisfies Section;

/** The normalised URL when `v` is a URL of one of `schemes` (as `URL.protocol` gives them), else undefined. */
function urlOf(v: unknown, schemes: readonly string[]): string | undefined {
  if (typeof v !== 'string') return undefined;
  try {
    const u = new URL(v);
    return schemes.includes(u.protocol) ? u.href : undefined;
  } catch {
    return undefined;
  }
}

export function defaultWorkers(): number {
  return Math.max(1, availableParallelism());
}
