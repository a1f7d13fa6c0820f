/**
 * `npm start`: the embedded default. Starts a local anvil (chain 4663) as the sequencer and
 * chain RPC, writes a development config under .dev/ (and an account, unless an accounts file
 * is already there: accounts added with the CLI survive a restart), and runs txgate on
 * 127.0.0.1:8080 with readable logs. Ctrl-C stops both. A second `npm start` on the same
 * directory is refused while the first runs (--dir gives it its own).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfigFile } from '../src/config.js';
import { ANVIL_KEYS, ANVIL_TIP_ADDRESS, startAnvil } from '../src/dev/anvil.js';
import { DEV_API_KEY, DEV_MIN_TIP_WEI, lockDevDir, writeDevFiles } from '../src/dev/dev-setup.js';
import { createLogger } from '../src/log.js';
import { initCrypto, uws } from '../src/native.js';
import { startService } from '../src/service.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8080' },
    'anvil-port': { type: 'string', default: '8545' },
    'internal-port': { type: 'string', default: '9464' },
    json: { type: 'boolean', default: false },
    dir: { type: 'string', default: '.dev' },
  },
});

uws();
await initCrypto();
const dir = resolve(values.dir);
let unlock: () => void;
try {
  unlock = lockDevDir(dir);
} catch (e) {
  process.stderr.write(`npm start: ${(e as Error).message}\n`);
  process.exit(1);
}
process.on('exit', () => unlock());
const anvil = await startAnvil({ port: Number(values['anvil-port']), chainId: 4663 });
const files = writeDevFiles(dir, { port: Number(values.port), internalPort: Number(values['internal-port']), sequencer: anvil.url });
const config = loadConfigFile(files.configFile);
const log = createLogger({ level: config.log.level, pretty: !values.json });
let service: Awaited<ReturnType<typeof startService>>;
try {
  service = await startService(config, log);
} catch (e) {
  await anvil.stop();
  throw e;
}
const { port } = service;

const base = `http://127.0.0.1:${port}`;
process.stdout.write(`
txgate (development) is up
  base URL        ${base}            (eth_chainId → 0x1237)
  API key         ${DEV_API_KEY}   (X-Api-Key; development only)
  tip address     ${ANVIL_TIP_ADDRESS}   (min tip ${DEV_MIN_TIP_WEI} wei, pattern: transfer)
  chain RPC       ${anvil.url}           (anvil, chain 4663: nonce, gas, receipts)
  funded test key ${ANVIL_KEYS[0]}
  metrics         http://127.0.0.1:${service.internalPort}/metrics   (internal listener)
  config          ${files.configFile}
  accounts        ${files.accountsFile}${files.accountsCreated ? '' : '   (kept from an earlier run)'}
  try             npm run demo        (in another terminal)

`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await service.stop();
  await anvil.stop();
  log.flush();
  setImmediate(() => process.exit(0));
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
