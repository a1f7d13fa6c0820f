/**
 * The embedded development default: one chain (4663) on a local anvil, one account whose key is
 * the public development key below (only its SHA-256 is written), tips to anvil account #9.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keySha256 } from '../accounts/keys.js';
import { ANVIL_TIP_ADDRESS } from './anvil.js';

/** A public, development-only API key (like anvil's well-known keys): never use it elsewhere. */
export const DEV_API_KEY = 'txg_dev_local_only_not_a_secret_0000000000';
export const DEV_CHAIN_ID = 4663;
export const DEV_MIN_TIP_WEI = 1_000_000_000_000n;

/**
 * Claims a development directory for this process (a lock file holding its pid), so that two
 * `npm start`s in one checkout cannot clobber each other's files. A lock left by a process that
 * is gone is taken over. Returns the release function.
 */
export function lockDevDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, 'lock');
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(readFileSync(lock, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
        throw new Error(
          `${dir} is in use by another development txgate (pid ${pid}): stop it first, or give this one its own directory and ports (npm start -- --dir .dev2 --port 8081 --anvil-port 8546 --internal-port 9465)`,
        );
      rmSync(lock, { force: true });
    }
  }
  return () => rmSync(lock, { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What `npm start` turns on for the development chain (off by default, as in production). */
export interface DevExtensions {
  /** eth_sendRawTransactionSync on chain 4663 (anvil is the chain RPC; the timeout answer omits the waited time). */
  readonly sync?: boolean;
  /** The WebSocket transport on the public port. */
  readonly websocket?: boolean;
  /** Tracking on chain 4663 (anvil is the chain RPC): txgate_getTransactionStatus served (docs/tracking.md). */
  readonly track?: boolean;
  /**
   * A flashblocks builder over anvil (flashblocks.ts): it is the sequencer (`sequencer`) and its
   * stream (`url`); anvil (`anvil`) the chain RPC; tracking and the sync send's `receipt` mode on.
   */
  readonly flashblocks?: { readonly url: string; readonly sequencer: string; readonly anvil: string };
  /** HTTPS (and WSS) on the public port with these files (dev-tls.ts). */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  /**
   * eth_sendRawTransactionConditional on chain 4663: the chain's sequencer is the development
   * sequencer at `sequencer` (conditional-sequencer/), anvil (`rpc`) the chain RPC.
   */
  readonly conditional?: boolean;
  /** The chain RPC where it is not the sequencer (with `conditional`: anvil behind the development sequencer). */
  readonly rpc?: string;
}

export interface DevFiles {
  readonly configFile: string;
  readonly accountsFile: string;
  /** False when an accounts file was already there and kept (accounts added with the CLI survive a restart). */
  readonly accountsCreated: boolean;
  /** False when the config was edited since npm start wrote it, and kept as it is. */
  readonly configWritten: boolean;
}

/** The development config for these ports, sequencer and extensions. */
export function devConfig(opts: { port: number; internalPort: number; sequencer: string } & DevExtensions): Record<string, unknown> {
  const fb = opts.flashblocks;
  const chain =
    fb === undefined
      ? {}
      : {
          sequencers: [fb.sequencer],
          rpc: fb.anvil,
          rpcWs: fb.anvil.replace(/^http/, 'ws'),
          sync: { enabled: true, mode: 'receipt' },
          track: { enabled: true },
          flashblocks: { enabled: true, url: fb.url },
        };
  return {
    listen: { host: '127.0.0.1', port: opts.port, ...(opts.tls !== undefined ? { tls: { enabled: true, ...opts.tls } } : {}) },
    internal: { host: '127.0.0.1', port: opts.internalPort },
    chains: [
      {
        chainId: DEV_CHAIN_ID,
        hosts: ['localhost', '127.0.0.1'],
        sequencers: [opts.sequencer],
        ...(opts.sync === true || opts.track === true || opts.conditional === true ? { rpc: opts.rpc ?? opts.sequencer } : {}),
        ...(opts.sync === true ? { sync: { enabled: true, syncTimeoutFormat: 'omit' } } : {}),
        ...(opts.track === true ? { track: { enabled: true } } : {}),
        ...(opts.conditional === true ? { conditional: { enabled: true } } : {}),
        ...chain,
      },
    ],
    accounts: { file: './accounts.json' },
    ...(opts.websocket === true ? { websocket: { enabled: true } } : {}),
    workers: 1,
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Writes the development config, unless it was edited since npm start last wrote it (the digest
 * of what it wrote is kept beside it, in `.generated`): an edited config is the user's, kept and
 * used as it is, until deleted. The accounts file is written only if there is none yet (its dev
 * account may use the sync send and the conditional send, where the chain serves them).
 */
export function writeDevFiles(dir: string, opts: { port: number; internalPort: number; sequencer: string } & DevExtensions): DevFiles {
  mkdirSync(dir, { recursive: true });
  const accountsFile = join(dir, 'accounts.json');
  const configFile = join(dir, 'txgate.json');
  const generatedFile = join(dir, '.generated');
  const accountsCreated = !existsSync(accountsFile);
  if (accountsCreated)
    writeFileSync(
      accountsFile,
      JSON.stringify(
        {
          accounts: [
            {
              id: 'dev',
              keySha256: [keySha256(DEV_API_KEY)],
              submissionEnabled: true,
              allowUntipped: false,
              grants: [
                {
                  chainId: DEV_CHAIN_ID,
                  rateLimit: { perSecond: 100, burst: 200 },
                  txTypes: [2],
                  tipAddresses: [ANVIL_TIP_ADDRESS],
                  minTipWei: DEV_MIN_TIP_WEI.toString(),
                  feePatterns: [{ kind: 'transfer' }],
                  sync: true,
                  conditional: true,
                },
              ],
            },
          ],
        },
        null,
        2,
      ) + '\n',
    );
  const text = JSON.stringify(devConfig(opts), null, 2) + '\n';
  const current = existsSync(configFile) ? readFileSync(configFile, 'utf8') : null;
  const last = existsSync(generatedFile) ? readFileSync(generatedFile, 'utf8').trim() : null;
  // Ours to rewrite: absent, or exactly what was written last (or written before the digest was kept).
  const configWritten = current === null || last === null || sha256(current) === last;
  if (configWritten) {
    writeFileSync(configFile, text);
    writeFileSync(generatedFile, sha256(text) + '\n');
  }
  return { configFile, accountsFile, accountsCreated, configWritten };
}
