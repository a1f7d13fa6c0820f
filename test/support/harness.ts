/**
 * Starts the real txgate (uWS front end, real stages) in this process on an ephemeral port,
 * with its logs captured so tests can assert on them, and an accounts file in a temp dir.
 */
import type { OpenOptions as LaneOpenOptions } from '../../src/express-lane/lanes.js';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { generateKey } from '../../src/accounts/admin.js';
import { createApp, type App, type Observers } from '../../src/app.js';
import { startService } from '../../src/service.js';
import { parseConfig, type Config } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import { initCrypto } from '../../src/base/native.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

/** Every log line of every server started in this test process. */
export const capturedLogs: string[] = [];
/** Every API key handed out in this test process (checked against the logs). */
export const issuedKeys: string[] = [];

export function newKey(): string {
  const k = generateKey();
  issuedKeys.push(k);
  return k;
}

export const TIP = '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720';
export const MIN_TIP = 1_000_000_000_000n;

export interface GrantIn {
  chainId?: number;
  rateLimit?: { perSecond: number; burst: number };
  txTypes?: number[];
  tipAddresses?: string[];
  minTipWei?: string;
  feePatterns?: unknown[];
  senders?: string[];
  sync?: boolean;
  expressLane?: boolean;
  conditional?: boolean;
}

export interface AccountIn {
  id: string;
  keys: string[];
  submissionEnabled?: boolean;
  allowUntipped?: boolean;
  grants?: GrantIn[];
}

export function accountsDoc(accounts: AccountIn[]): unknown {
  return {
    accounts: accounts.map((a) => ({
      id: a.id,
      keySha256: a.keys.map(keySha256),
      submissionEnabled: a.submissionEnabled ?? true,
      allowUntipped: a.allowUntipped ?? false,
      grants: (a.grants ?? [{}]).map((g) => ({
        chainId: g.chainId ?? DEV_CHAIN_ID,
        rateLimit: g.rateLimit ?? { perSecond: 1000, burst: 1000 },
        txTypes: g.txTypes ?? [2],
        tipAddresses: g.tipAddresses ?? [TIP],
        minTipWei: g.minTipWei ?? MIN_TIP.toString(),
        feePatterns: g.feePatterns ?? [{ kind: 'transfer' }],
        ...(g.senders !== undefined ? { senders: g.senders } : {}),
        ...(g.sync !== undefined ? { sync: g.sync } : {}),
        ...(g.expressLane !== undefined ? { expressLane: g.expressLane } : {}),
        ...(g.conditional !== undefined ? { conditional: g.conditional } : {}),
      })),
    })),
  };
}

export interface Gate {
  readonly app: App;
  readonly port: number;
  /** The internal listener's port (metrics), when started with `internal: true`. */
  readonly internalPort: number | null;
  readonly config: Config;
  readonly dir: string;
  readonly accountsFile: string;
  readonly logs: string[];
  /** Replaces the accounts file atomically (as the onboarding tools do). */
  writeAccounts(doc: unknown): void;
  stop(): Promise<void>;
}

export interface GateOptions {
  /** Config fields (merged over a test default: the development chain (DEV_CHAIN_ID) on localhost, ephemeral port). */
  config?: Record<string, unknown>;
  accounts?: AccountIn[] | null;
  sequencers?: string[];
  observers?: Observers;
  /** Start the internal listener too (metrics, health and readiness mirrors). */
  internal?: boolean;
  /** Add a second chain (10, host fast.chain-b.example) served by the same stub under /chain10. */
  chainB?: boolean;
  /** Fields merged into the development chain's config (e.g. `sync`). */
  chainA?: Record<string, unknown>;
  /** How the express lanes open (a round clock that follows the chain's, the key's environment). */
  lanes?: LaneOpenOptions;
}

export async function startGate(opts: GateOptions = {}): Promise<Gate> {
  await initCrypto();
  const dir = mkdtempSync(join(tmpdir(), 'txgate-test-'));
  const accountsFile = join(dir, 'accounts.json');
  const writeAccounts = (doc: unknown) => {
    const tmp = accountsFile + '.tmp';
    writeFileSync(tmp, typeof doc === 'string' ? doc : JSON.stringify(doc));
    renameSync(tmp, accountsFile);
  };
  if (opts.accounts !== null) writeAccounts(accountsDoc(opts.accounts ?? []));
  const raw = {
    listen: { host: '127.0.0.1', port: 0 },
    internal: { host: '127.0.0.1', port: 0 },
    chains: [
      {
        chainId: DEV_CHAIN_ID,
        hosts: ['localhost', '127.0.0.1', 'fast.chain-a.example'],
        sequencers: opts.sequencers ?? ['http://127.0.0.1:9'],
        probe: { intervalMs: 100, timeoutMs: 500 },
        forward: { timeoutMs: 1000 },
        ...opts.chainA,
      },
      ...(opts.chainB === false
        ? []
        : [
            {
              chainId: 10,
              hosts: ['fast.chain-b.example'],
              sequencers: (opts.sequencers ?? ['http://127.0.0.1:9']).map((u) => u + '/chain10'),
              probe: { intervalMs: 100, timeoutMs: 500 },
            },
          ]),
    ],
    accounts: { file: accountsFile },
    log: { level: 'debug' },
    shutdown: { graceMs: 2000 },
    workers: 1,
    ...(opts.config ?? {}),
  };
  const config = parseConfig(raw, dir, {});
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        logs.push(line);
        capturedLogs.push(line);
      }
      cb();
    },
  });
  const log = createLogger({ level: config.log.level, destination });
  if (opts.internal === true) {
    const service = await startService(config, log);
    return live({
      app: service.app!,
      port: service.port,
      internalPort: service.internalPort,
      config,
      dir,
      accountsFile,
      logs,
      writeAccounts,
      stop: once(() => service.stop().finally(() => rmSync(dir, { recursive: true, force: true }))),
    });
  }
  const app = createApp({
    config,
    log,
    ...(opts.observers !== undefined ? { observers: opts.observers } : {}),
    ...(opts.lanes !== undefined ? { lanes: opts.lanes } : {}),
  });
  const port = await app.start();
  return live({
    app,
    port,
    internalPort: null,
    config,
    dir,
    accountsFile,
    logs,
    writeAccounts,
    stop: once(() => app.stop().finally(() => rmSync(dir, { recursive: true, force: true }))),
  });
}

/** Every gate of this test process not yet stopped (test/support/gate-fixture.ts stops them). */
export const liveGates = new Set<Gate>();

function live(gate: Gate): Gate {
  liveGates.add(gate);
  const stop = gate.stop;
  return Object.assign(gate, { stop: () => (liveGates.delete(gate), stop()) });
}

/** `stop` run once: a second call (the file's own after hook and the fixture's) gets the first one's promise. */
function once(stop: () => Promise<void>): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => (stopping ??= stop());
}

/**
 * The development chain (Host localhost) in front of stub sequencers, for fault tests: probed every 100 ms,
 * a 300-ms forward timeout (`forward` merged in), and any other chain fields as given.
 */
export function stubChain(sequencers: readonly string[], forward: Record<string, unknown> = {}, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    chainId: DEV_CHAIN_ID,
    hosts: ['localhost'],
    sequencers,
    probe: { intervalMs: 100, timeoutMs: 300 },
    forward: { timeoutMs: 300, ...forward },
    ...fields,
  };
}

/** Polls `check` every 20 ms until it is truthy or `ms` passes. */
export async function eventually<T>(check: () => T | Promise<T>, ms = 3000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
