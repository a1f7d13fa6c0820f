/**
 * The embedded development default: one chain (4663) on a local anvil, one account whose key is
 * the public development key below (only its SHA-256 is written), tips to anvil account #9.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keySha256 } from '../stages/auth.js';
import { ANVIL_TIP_ADDRESS } from './anvil.js';

/** A public, development-only API key (like anvil's well-known keys): never use it elsewhere. */
export const DEV_API_KEY = 'txg_dev_local_only_not_a_secret_0000000000';
export const DEV_CHAIN_ID = 4663;
export const DEV_MIN_TIP_WEI = 1_000_000_000_000n;

export interface DevFiles {
  readonly configFile: string;
  readonly accountsFile: string;
}

export function writeDevFiles(dir: string, opts: { port: number; internalPort: number; sequencer: string }): DevFiles {
  mkdirSync(dir, { recursive: true });
  const accountsFile = join(dir, 'accounts.json');
  const configFile = join(dir, 'txgate.json');
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
  return { configFile, accountsFile };
}
