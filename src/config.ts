/**
 * Configuration (docs/design.md §2.1): loaded and validated once at start-up. Every problem is reported
 * at once, each naming its field; the result is deep-frozen and each part of the service is
 * handed only its slice. Every field has a default except `chains`.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { isObj, Reader } from './config-reader.js';

export type ForwardStrategy = 'failover' | 'fanout';

/**
 * Which library recovers signatures on the hot path: `npm` (the prebuilt binding inside the
 * `secp256k1` package, the default: `npm ci` installs it) or `system` (the system's
 * libsecp256k1 0.2+, built by `npm run build:secp256k1`; see native.ts).
 */
export type Secp256k1Binding = 'npm' | 'system';
export const SECP256K1_BINDINGS: readonly Secp256k1Binding[] = ['npm', 'system'];

/**
 * How the signature of an EIP-1559 (0x02) transaction is checked (tx/decoder.ts): `recover`
 * (the default) recovers the sender's public key; `curve` makes every check recovery makes but
 * the last (r and s in range, low s, y-parity 0 or 1, r the x-coordinate of a curve point) and
 * recovers the sender only when something asks for it. They differ only on a signature built on
 * purpose so that the recovered point is at infinity, which no signer produces and the
 * sequencer refuses.
 */
export type SignatureCheck = 'recover' | 'curve';
export const SIGNATURE_CHECKS: readonly SignatureCheck[] = ['recover', 'curve'];

export interface ChainConfig {
  readonly chainId: number;
  /** The fork whose transaction rules apply (an @ethereumjs/common hardfork name). */
  readonly hardfork: string;
  /** Hostnames bound to this chain, lower-cased, without port. */
  readonly hosts: readonly string[];
  readonly sequencers: readonly string[];
  /** The chain's own RPC (receipts), where a feature needs it: the sync send's `receipt` mode. Null when not set. */
  readonly rpc: string | null;
  /**
   * The chain RPC's WebSocket endpoint (ws or wss), where it offers one: the sync `receipt` mode
   * subscribes to its new heads and asks for a receipt on each, polling only while it is down.
   */
  readonly rpcWs: string | null;
  readonly forward: {
    readonly strategy: ForwardStrategy;
    readonly timeoutMs: number;
    /** In-flight forwards for this chain (per thread); beyond it, 503 overloaded at once. */
    readonly maxInFlight: number;
    /** Keep-alive connections per sequencer (per thread): requests written at once (over WebSocket: calls in flight at once). */
    readonly connections: number;
    /** WebSocket connections kept open per ws(s):// sequencer (per thread), each carrying many calls. */
    readonly wsConnections: number;
    /** How long a forward may wait for a free connection before it is refused unsent (503 overloaded). */
    readonly queueMs: number;
  };
  readonly probe: { readonly intervalMs: number; readonly timeoutMs: number };
  /** eth_sendRawTransactionSync (EIP-7966): off unless a deployment turns it on (src/sync/). */
  readonly sync: SyncConfig;
}

export interface SyncConfig {
  readonly enabled: boolean;
  /** The longest a call may wait for its receipt (a client's own timeout is capped by it). */
  readonly maxWaitMs: number;
  /**
   * How the receipt is obtained: `forward` sends the sync method to the sequencer; `receipt`
   * sends the plain eth_sendRawTransaction (a sequencer that takes only that) and then asks the
   * chain RPC (`chains[].rpc`) for the receipt until the wait runs out: on each new head where
   * `chains[].rpcWs` is subscribed, else every `pollMs`.
   */
  readonly mode: 'forward' | 'receipt';
  /** `receipt` mode: the interval between receipt polls of the chain RPC (while no head subscription is live). */
  readonly pollMs: number;
  /** How long an answered receipt is kept to answer a resend of the same bytes without a forward (0: not kept). */
  readonly receiptTtlMs: number;
  /**
   * How the wait is written to the sequencer: an integer of ms (the EIP, Erigon), 0x-hex (Nitro,
   * Bor, viem), or `omit` for a sequencer that takes the transaction alone (anvil), which then
   * waits as long as it is configured to.
   */
  readonly syncTimeoutFormat: 'number' | 'hex' | 'omit';
  /** Sync calls waiting at once for this chain (per thread), each on a connection of its own (up to 1024); beyond it 503 overloaded, nothing sent. */
  readonly maxWaiting: number;
}

/**
 * Where accounts come from: the accounts file (`file`, the embedded default), or PostgreSQL
 * (`postgres`: the fleet store, each edge holding a full snapshot kept fresh by LISTEN/NOTIFY,
 * answering 503 credentials_stale once its last sync is older than `maxStaleMs`).
 */
export interface AccountsConfig {
  readonly store: 'file' | 'postgres';
  readonly file: string;
  /** postgres://… (only with store "postgres"; its password never reaches a log). */
  readonly url: string;
  readonly maxStaleMs: number;
  /** Full resync period, the backstop to notifications (and the heartbeat of the store's state). */
  readonly resyncMs: number;
  /** With postgres: how long start-up waits for the database to answer before it exits 1 (start-checks.ts). */
  readonly startWaitMs: number;
}

export interface Config {
  readonly listen: { readonly host: string; readonly port: number };
  readonly internal: { readonly enabled: boolean; readonly host: string; readonly port: number };
  readonly limits: { readonly maxBodyBytes: number; readonly chainIdMaxBodyBytes: number; readonly maxBufferedBodyBytes: number };
  readonly allowUntipped: boolean;
  readonly chains: readonly ChainConfig[];
  readonly accounts: AccountsConfig;
  readonly log: { readonly level: LogLevel };
  readonly shutdown: { readonly graceMs: number };
  readonly workers: number;
  readonly metrics: { readonly enabled: boolean };
  /** A spinning thread at nice 19 beside each server thread while traffic flows (see busy-poll.ts). */
  readonly busyPoll: boolean;
  /** Which libsecp256k1 recovers signatures (the npm package's by default), and how 0x02 signatures are checked. */
  readonly crypto: { readonly secp256k1: Secp256k1Binding; readonly signature: SignatureCheck };
  readonly profiling: { readonly serverTiming: boolean };
  readonly tipAddresses: { readonly maxAgeSeconds: number };
  readonly dedup: { readonly acceptedTtlMs: number; readonly maxEntries: number };
  /** The WebSocket submission lane (src/ws/): off unless a deployment turns it on (docs/design.md §6.1). */
  readonly websocket: WebSocketConfig;
}

/**
 * The WebSocket lane on the public port: `GET /` with `Upgrade: websocket`, authenticated at the
 * upgrade, then one JSON-RPC request per text frame through the same stages, answered by id.
 */
export interface WebSocketConfig {
  readonly enabled: boolean;
  /** Requests in flight on one connection; beyond it a frame is answered `overloaded`, nothing sent. */
  readonly maxInFlight: number;
  /** Open connections per account (per server thread); beyond it the upgrade is refused 429 too_many_connections. */
  readonly maxConnectionsPerAccount: number;
  /** Seconds without a frame either way before the connection is closed; the server pings before that (0: never). */
  readonly idleTimeoutSeconds: number;
  /**
   * Answer bytes a connection may leave unread: past half of it new requests are answered
   * `overloaded` (nothing sent), past all of it an answer cannot be queued and the connection is
   * closed (1013): its requests in flight are then unanswered, logged as such.
   */
  readonly maxBackpressureBytes: number;
}

/** Forks whose transaction rules the decoder knows (@ethereumjs/common names). */
export const HARDFORKS = ['london', 'paris', 'shanghai', 'cancun', 'prague', 'osaka'] as const;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** A hostname as the Host header carries it: lower case, no port, no scheme, no path. */
const HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;

/**
 * Validates a parsed configuration object. `baseDir` resolves relative file paths (the
 * directory of the config file). Throws ConfigError listing every problem.
 */
export function parseConfig(input: unknown, baseDir: string, env: NodeJS.ProcessEnv = process.env): Config {
  const r = new Reader();
  const top = r.obj(input, 'config', [
    'listen',
    'internal',
    'limits',
    'allowUntipped',
    'chains',
    'accounts',
    'log',
    'shutdown',
    'workers',
    'metrics',
    'profiling',
    'tipAddresses',
    'dedup',
    'crypto',
    'busyPoll',
    'websocket',
  ]);
  if (!isObj(input)) r.problems.push('config: must be a JSON object');

  const listenIn = r.obj(top.listen, 'listen', ['host', 'port']);
  const internalIn = r.obj(top.internal, 'internal', ['enabled', 'host', 'port']);
  const limitsIn = r.obj(top.limits, 'limits', ['maxBodyBytes', 'chainIdMaxBodyBytes', 'maxBufferedBodyBytes']);
  const accountsIn = r.obj(top.accounts, 'accounts', ['store', 'file', 'url', 'maxStaleMs', 'resyncMs', 'startWaitMs']);
  const accountsStore = r.oneOf<'file' | 'postgres'>(accountsIn.store, 'accounts.store', 'file', ['file', 'postgres']);
  const accountsUrl = typeof accountsIn.url === 'string' ? accountsIn.url : '';
  if (accountsStore === 'postgres' && !/^postgres(?:ql)?:\/\/./.test(accountsUrl))
    r.problems.push('accounts.url: required with store "postgres" (postgres://user:password@host:port/db)');
  if (accountsIn.url !== undefined && typeof accountsIn.url !== 'string') r.problems.push('accounts.url: must be a string');
  const logIn = r.obj(top.log, 'log', ['level']);
  const shutdownIn = r.obj(top.shutdown, 'shutdown', ['graceMs']);
  const metricsIn = r.obj(top.metrics, 'metrics', ['enabled']);
  const profilingIn = r.obj(top.profiling, 'profiling', ['serverTiming']);
  const cryptoIn = r.obj(top.crypto, 'crypto', ['secp256k1', 'signature']);
  const tipIn = r.obj(top.tipAddresses, 'tipAddresses', ['maxAgeSeconds']);
  const dedupIn = r.obj(top.dedup, 'dedup', ['acceptedTtlMs', 'maxEntries']);
  const wsIn = r.obj(top.websocket, 'websocket', ['enabled', 'maxInFlight', 'maxConnectionsPerAccount', 'idleTimeoutSeconds', 'maxBackpressureBytes']);
  const idleTimeoutSeconds = r.int(wsIn.idleTimeoutSeconds, 'websocket.idleTimeoutSeconds', 60, 0, 960);
  // uWS counts idle time in 4-second ticks and needs at least 8 s (0 turns the timeout off).
  if (idleTimeoutSeconds !== 0 && (idleTimeoutSeconds < 8 || idleTimeoutSeconds % 4 !== 0))
    r.problems.push('websocket.idleTimeoutSeconds: must be 0 (never) or a multiple of 4 from 8 to 960');

  const maxBodyBytes = r.int(limitsIn.maxBodyBytes, 'limits.maxBodyBytes', 65536, 512, 65536);
  const chainIdMaxBodyBytes = r.int(limitsIn.chainIdMaxBodyBytes, 'limits.chainIdMaxBodyBytes', 512, 64, 512);
  // Bodies being read, every thread together (http/body-budget.ts): 64 MiB holds 1,024 bodies at the cap.
  const maxBufferedBodyBytes = r.int(limitsIn.maxBufferedBodyBytes, 'limits.maxBufferedBodyBytes', 64 * 1024 * 1024, 65536, 1024 * 1024 * 1024);

  const envLevel = env.TXGATE_LOG_LEVEL;
  const level = r.oneOf<LogLevel>(envLevel ?? logIn.level, envLevel === undefined ? 'log.level' : 'TXGATE_LOG_LEVEL', 'info', LOG_LEVELS);

  const chains = readChains(r, top.chains);

  const cfg: Config = {
    listen: {
      host: r.str(listenIn.host, 'listen.host', '0.0.0.0'),
      port: r.int(listenIn.port, 'listen.port', 8080, 0, 65535),
    },
    internal: {
      enabled: r.bool(internalIn.enabled, 'internal.enabled', true),
      host: r.str(internalIn.host, 'internal.host', '127.0.0.1'),
      port: r.int(internalIn.port, 'internal.port', 9464, 0, 65535),
    },
    limits: { maxBodyBytes, chainIdMaxBodyBytes: Math.min(chainIdMaxBodyBytes, maxBodyBytes), maxBufferedBodyBytes },
    allowUntipped: r.bool(top.allowUntipped, 'allowUntipped', false),
    chains,
    accounts: {
      store: accountsStore,
      file: resolve(baseDir, r.str(accountsIn.file, 'accounts.file', './accounts.json')),
      url: accountsUrl,
      maxStaleMs: r.int(accountsIn.maxStaleMs, 'accounts.maxStaleMs', 120_000, 1_000, 86_400_000),
      resyncMs: r.int(accountsIn.resyncMs, 'accounts.resyncMs', 30_000, 200, 3_600_000),
      startWaitMs: r.int(accountsIn.startWaitMs, 'accounts.startWaitMs', 30_000, 0, 3_600_000),
    },
    log: { level },
    shutdown: { graceMs: r.int(shutdownIn.graceMs, 'shutdown.graceMs', 10_000, 0, 600_000) },
    workers: r.int(top.workers, 'workers', defaultWorkers(), 1, 256),
    metrics: { enabled: r.bool(metricsIn.enabled, 'metrics.enabled', true) },
    profiling: { serverTiming: r.bool(profilingIn.serverTiming, 'profiling.serverTiming', false) },
    busyPoll: r.bool(top.busyPoll, 'busyPoll', false),
    crypto: {
      secp256k1: r.oneOf<Secp256k1Binding>(cryptoIn.secp256k1, 'crypto.secp256k1', 'npm', SECP256K1_BINDINGS),
      signature: r.oneOf<SignatureCheck>(cryptoIn.signature, 'crypto.signature', 'curve', SIGNATURE_CHECKS),
    },
    tipAddresses: { maxAgeSeconds: r.int(tipIn.maxAgeSeconds, 'tipAddresses.maxAgeSeconds', 60, 0, 86_400) },
    dedup: {
      acceptedTtlMs: r.int(dedupIn.acceptedTtlMs, 'dedup.acceptedTtlMs', 5000, 0, 600_000),
      maxEntries: r.int(dedupIn.maxEntries, 'dedup.maxEntries', 100_000, 1, 10_000_000),
    },
    websocket: {
      enabled: r.bool(wsIn.enabled, 'websocket.enabled', false),
      maxInFlight: r.int(wsIn.maxInFlight, 'websocket.maxInFlight', 256, 1, 65_536),
      maxConnectionsPerAccount: r.int(wsIn.maxConnectionsPerAccount, 'websocket.maxConnectionsPerAccount', 16, 1, 10_000),
      idleTimeoutSeconds,
      maxBackpressureBytes: r.int(wsIn.maxBackpressureBytes, 'websocket.maxBackpressureBytes', 4 << 20, 64 << 10, 1 << 30),
    },
  };

  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return deepFreeze(cfg);
}

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
const httpUrl = (v: unknown) => urlOf(v, ['http:', 'https:']);
const wsUrl = (v: unknown) => urlOf(v, ['ws:', 'wss:']);

/** The `chains` array: each chain's fields, and hostnames bound to one chain only. */
function readChains(r: Reader, value: unknown): ChainConfig[] {
  const chains: ChainConfig[] = [];
  const hostOwner = new Map<string, number>();
  const chainIds = new Set<number>();
  if (value === undefined) r.problems.push('chains: required (at least one chain)');
  else if (!Array.isArray(value) || value.length === 0) r.problems.push('chains: must be a non-empty array');
  else {
    value.forEach((c: unknown, i: number) => {
      const f = `chains[${i}]`;
      const cin = r.obj(c, f, ['chainId', 'hardfork', 'hosts', 'sequencers', 'rpc', 'rpcWs', 'forward', 'probe', 'sync']);
      if (!isObj(c)) return;
      const chainId = r.int(cin.chainId, `${f}.chainId`, 0, 1, Number.MAX_SAFE_INTEGER);
      if (cin.chainId === undefined) r.problems.push(`${f}.chainId: required`);
      else if (chainIds.has(chainId)) r.problems.push(`${f}.chainId: ${chainId} is configured twice`);
      chainIds.add(chainId);

      const hosts: string[] = [];
      if (!Array.isArray(cin.hosts) || cin.hosts.length === 0) r.problems.push(`${f}.hosts: must be a non-empty array of hostnames`);
      else
        cin.hosts.forEach((h: unknown, j: number) => {
          const hf = `${f}.hosts[${j}]`;
          if (typeof h !== 'string' || !HOSTNAME.test(h.toLowerCase())) {
            r.problems.push(`${hf}: must be a bare hostname (no scheme, port or path)`);
            return;
          }
          const host = h.toLowerCase();
          const owner = hostOwner.get(host);
          if (owner !== undefined) r.problems.push(`${hf}: "${host}" is already bound to chains[${owner}]`);
          hostOwner.set(host, i);
          hosts.push(host);
        });

      const sequencers: string[] = [];
      if (!Array.isArray(cin.sequencers) || cin.sequencers.length === 0) r.problems.push(`${f}.sequencers: must be a non-empty array of http(s) or ws(s) URLs`);
      else
        cin.sequencers.forEach((s: unknown, j: number) => {
          const u = httpUrl(s) ?? wsUrl(s);
          if (u === undefined) r.problems.push(`${f}.sequencers[${j}]: must be an http://, https://, ws:// or wss:// URL`);
          else sequencers.push(u);
        });

      const fwd = r.obj(cin.forward, `${f}.forward`, ['strategy', 'timeoutMs', 'maxInFlight', 'connections', 'queueMs', 'wsConnections']);
      const probe = r.obj(cin.probe, `${f}.probe`, ['intervalMs', 'timeoutMs']);
      const sync = r.obj(cin.sync, `${f}.sync`, ['enabled', 'maxWaitMs', 'mode', 'syncTimeoutFormat', 'maxWaiting', 'pollMs', 'receiptTtlMs']);
      const rpc = cin.rpc === undefined ? null : (httpUrl(cin.rpc) ?? null);
      if (cin.rpc !== undefined && rpc === null) r.problems.push(`${f}.rpc: must be an http:// or https:// URL`);
      const rpcWs = cin.rpcWs === undefined ? null : (wsUrl(cin.rpcWs) ?? null);
      if (cin.rpcWs !== undefined && rpcWs === null) r.problems.push(`${f}.rpcWs: must be a ws:// or wss:// URL`);
      const syncMode = r.oneOf<'forward' | 'receipt'>(sync.mode, `${f}.sync.mode`, 'forward', ['forward', 'receipt']);
      if (syncMode === 'receipt' && cin.rpc === undefined)
        r.problems.push(`${f}.rpc: required by sync.mode "receipt" (the chain RPC the receipts are read from)`);
      chains.push({
        chainId,
        hardfork: r.oneOf(cin.hardfork, `${f}.hardfork`, 'prague', HARDFORKS),
        hosts,
        sequencers,
        rpc,
        rpcWs,
        forward: {
          strategy: r.oneOf<ForwardStrategy>(fwd.strategy, `${f}.forward.strategy`, 'failover', ['failover', 'fanout']),
          timeoutMs: r.int(fwd.timeoutMs, `${f}.forward.timeoutMs`, 2000, 10, 60000),
          maxInFlight: r.int(fwd.maxInFlight, `${f}.forward.maxInFlight`, 1024, 1, 1_000_000),
          connections: r.int(fwd.connections, `${f}.forward.connections`, 128, 1, 1024),
          queueMs: r.int(fwd.queueMs, `${f}.forward.queueMs`, 1000, 1, 60_000),
          wsConnections: r.int(fwd.wsConnections, `${f}.forward.wsConnections`, 2, 1, 64),
        },
        probe: {
          intervalMs: r.int(probe.intervalMs, `${f}.probe.intervalMs`, 1000, 50, 600_000),
          timeoutMs: r.int(probe.timeoutMs, `${f}.probe.timeoutMs`, 1000, 10, 60_000),
        },
        sync: {
          enabled: r.bool(sync.enabled, `${f}.sync.enabled`, false),
          maxWaitMs: r.int(sync.maxWaitMs, `${f}.sync.maxWaitMs`, 2000, 1, 60_000),
          mode: syncMode,
          pollMs: r.int(sync.pollMs, `${f}.sync.pollMs`, 100, 10, 5_000),
          receiptTtlMs: r.int(sync.receiptTtlMs, `${f}.sync.receiptTtlMs`, 60_000, 0, 600_000),
          syncTimeoutFormat: r.oneOf<'number' | 'hex' | 'omit'>(sync.syncTimeoutFormat, `${f}.sync.syncTimeoutFormat`, 'number', ['number', 'hex', 'omit']),
          maxWaiting: r.int(sync.maxWaiting, `${f}.sync.maxWaiting`, 256, 1, 1024),
        },
      });
    });
  }
  return chains;
}

export function defaultWorkers(): number {
  return Math.max(1, availableParallelism());
}

/** Reads and validates a config file; JSON errors are reported like field errors. */
export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError([`${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError([`${path}: not valid JSON (${(e as Error).message})`]);
  }
  return parseConfig(json, dirname(resolve(path)), env);
}

export function deepFreeze<T>(o: T): T {
  if (typeof o === 'object' && o !== null && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/** A label for a sequencer that is safe to log and show: scheme://host:port, no credentials or path. */
export function sequencerLabel(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}
