/**
 * The embedded development default: one chain (4663) on a local anvil, one account whose key is
 * the public development key below (only its SHA-256 is written), tips to anvil account #9.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keySha256 } from '../accounts/keys.js';
import { ANVIL_TIP_ADDRESS } from './anvil.js';

/** A public, development-only API key (like anvil's well-known keys): never use it elsewhere. */
export const DEV_API_KEY = 'txg_dev_local_only_not_a_secret_0000000000';
export const DEV_CHAIN_ID = 4663;
export const DEV_MIN_TIP_WEI = 1_000_000_000_000n;

export interface DevFiles {
  readonly configFile: string;
  readonly accountsFile: string;
  /** False when an accounts file was already there and kept (accounts added with the CLI survive a restart). */
  readonly accountsCreated: boolean;
}

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

/** Writes the development config (ports, sequencer); the accounts file only if there is none yet. */
export function writeDevFiles(dir: string, opts: { port: number; internalPort: number; sequencer: string }): DevFiles {
  mkdirSync(dir, { recursive: true });
  const accountsFile = join(dir, 'accounts.json');
  const configFile = join(dir, 'txgate.json');
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
                },
              ],
            },
          ],
        },
        null,
        2,
      ) + '\n',
    );
  writeFileSync(
    configFile,
    JSON.stringify(
      {
        listen: { host: '127.0.0.1', port: opts.port },
        internal: { host: '127.0.0.1', port: opts.internalPort },
        chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost', '127.0.0.1'], sequencers: [opts.sequencer] }],
        accounts: { file: './accounts.json' },
        workers: 1,
      },
      null,
      2,
    ) + '\n',
  );
  return { configFile, accountsFile, accountsCreated };
}
