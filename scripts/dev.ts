/**
 * `npm start`: the embedded default. Starts a local anvil (chain 4663) as the sequencer and
 * chain RPC, writes a development config under .dev/ (and an account, unless an accounts file
 * is already there: accounts added with the CLI survive a restart), and runs txgate on
 * 127.0.0.1:8080 with readable logs. Ctrl-C, SIGTERM (to it or to the npm process that runs it)
 * stop both. A second `npm start` on the same directory is refused while the first runs (--dir
 * gives it its own). A bad option or an invalid config is exit 2 (each problem on its line, as
 * `txgate` says them); any other start-up failure is one line naming the problem and the option
 * to change, and exit 1, with nothing left running (docs/operations.md "Exit status").
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readCommandLine } from '../src/cli-args.js';
import { ConfigError, loadConfigFile } from '../src/config/config.js';
import { startAnvil, type Anvil } from '../src/dev/anvil.js';
import { banner } from '../src/dev/banner.js';
import { lockDevDir, writeDevFiles } from '../src/dev/dev-setup.js';
import { portFree } from '../src/dev/preflight.js';
import { claimAddress } from '../src/http/address-claim.js';
import { storeStartProblem } from '../src/accounts/open-store.js';
import { listenFailure } from '../src/http/listen-failure.js';
import { createLogger } from '../src/log/log.js';
import { initCrypto, uws } from '../src/base/native.js';
import { startService } from '../src/service.js';
import { makeDevTls, type DevTls } from '../src/dev/dev-tls.js';
import { tlsStartProblem } from '../src/tls/edge.js';
import { FlashblocksPublisher } from '../src/dev/flashblocks.js';
import { type ConditionalSequencer, startConditionalSequencer } from '../src/dev/conditional-sequencer/server.js';
import { fileTarget, setGrant } from '../src/accounts/admin.js';
import { freePort } from '../src/base/free-port.js';

const HELP = `npm start [-- options]: txgate on a local anvil (chain 4663), for development

  --port N           txgate's public port (default 8080)
  --anvil-port N     the local anvil's port (default 8545)
  --internal-port N  the internal listener's port, /metrics (default 9464)
  --dir DIR          the development directory: config, accounts, lock (default .dev)
  --sync             turn on eth_sendRawTransactionSync for chain 4663 (anvil as the chain RPC)
  --websocket        turn on the WebSocket transport on the public port
  --track            turn on tracking for chain 4663 (anvil as the chain RPC): each accepted
                     transaction followed to its block, txgate_getTransactionStatus served
  --flashblocks      a flashblocks builder over anvil (mining stopped; a slice every 200 ms,
                     a block every 2 s) as chain 4663's sequencer and stream, with tracking
                     and the sync send on: a transaction goes pending, preconfirmed, included
  --conditional      serve eth_sendRawTransactionConditional for chain 4663 (ERC-7796): a development
                     sequencer in front of anvil checks the conditions against anvil's state
  --sequencer-port N that sequencer's port, with --conditional (default 8550)
  --tls              serve HTTPS (and WSS) with a throw-away certificate for localhost,
                     signed by a development CA kept in DIR/tls/ca.pem (trust that file)
  --json             JSON log lines instead of readable ones (readable only on a terminal)
  -h, --help         this help

The config (DIR/txgate.json) is written on each start from these options, unless you edited
it since: an edited config is yours, used as it is (the options above then do not change it)
until you delete it. The accounts file is written only when there is none.`;

function fail(message: string, code = 1): never {
  process.stderr.write(`npm start: ${message}\n`);
  process.exit(code);
}

/** Bad input (an option, a value, the config): exit 2. */
function usage(message: string): never {
  fail(message, 2);
}

let values: {
  port: string;
  'anvil-port': string;
  'internal-port': string;
  json: boolean;
  dir: string;
  help: boolean;
  sync: boolean;
  websocket: boolean;
  tls: boolean;
  track: boolean;
  flashblocks: boolean;
  conditional: boolean;
  'sequencer-port': string;
};
try {
  ({ values } = readCommandLine({
    port: { type: 'string', default: '8080' },
    'anvil-port': { type: 'string', default: '8545' },
    'internal-port': { type: 'string', default: '9464' },
    json: { type: 'boolean', default: false },
    dir: { type: 'string', default: '.dev' },
    help: { type: 'boolean', short: 'h', default: false },
    sync: { type: 'boolean', default: false },
    websocket: { type: 'boolean', default: false },
    tls: { type: 'boolean', default: false },
    track: { type: 'boolean', default: false },
    flashblocks: { type: 'boolean', default: false },
    conditional: { type: 'boolean', default: false },
    'sequencer-port': { type: 'string', default: '8550' },
  }) as { values: typeof values });
} catch (e) {
  usage(`${(e as Error).message} (npm start -- --help lists the options)`);
}
if (values.help) {
  process.stdout.write(HELP + '\n');
  process.exit(0);
}
const ports = { port: values.port, 'anvil-port': values['anvil-port'], 'internal-port': values['internal-port'], 'sequencer-port': values['sequencer-port'] };
for (const [name, v] of Object.entries(ports))
  if (!/^\d{1,5}$/.test(v) || Number(v) < 1 || Number(v) > 65535) usage(`--${name} ${JSON.stringify(v)} is not a port (1-65535)`);
const port = Number(values.port);
const anvilPort = Number(values['anvil-port']);
const internalPort = Number(values['internal-port']);
const sequencerPort = Number(values['sequencer-port']);
if (new Set([port, anvilPort, internalPort]).size !== 3) usage('--port, --anvil-port and --internal-port must differ');
if (values.conditional && [port, anvilPort, internalPort].includes(sequencerPort))
  usage('--sequencer-port must differ from --port, --anvil-port and --internal-port');
if (!values.conditional && process.argv.some((a) => a === '--sequencer-port' || a.startsWith('--sequencer-port=')))
  usage('--sequencer-port is the development sequencer of --conditional: give --conditional too');
// Each puts its own development sequencer in front of anvil: one chain has one.
if (values.conditional && values.flashblocks) usage('--conditional and --flashblocks each put a development sequencer in front of anvil: give one');

try {
  uws();
  await initCrypto();
} catch (e) {
  fail((e as Error).message);
}
const dir = resolve(values.dir);
let unlock: () => void;
try {
  unlock = lockDevDir(dir);
} catch (e) {
  fail((e as Error).message);
}
process.on('exit', () => unlock());

// Every port is checked before anything starts: a port held by anything (another anvil on
// another chain, a process that accepts and never answers) is named with the option to change.
for (const [name, p, what] of [
  ['anvil-port', anvilPort, 'the local anvil'],
  ['port', port, "txgate's public port"],
  ['internal-port', internalPort, "txgate's internal listener"],
  ...(values.conditional ? [['sequencer-port', sequencerPort, 'the development conditional sequencer'] as const] : []),
] as const)
  if (!(await portFree('127.0.0.1', p))) fail(`127.0.0.1:${p} (${what}) is already in use: stop what holds it, or choose another with --${name}`);

// Held for the life of this process: a txgate started on the same port meanwhile exits 1.
try {
  await claimAddress('127.0.0.1', port);
} catch (e) {
  fail(`${(e as Error).message}: stop what holds it, or choose another with --port`);
}

// The files and every check of them first: a bad config, certificate or accounts file ends the
// start at once, before anvil is started (its URL is known from its port).
let devTls: DevTls | undefined;
try {
  devTls = values.tls ? makeDevTls(dir) : undefined;
} catch (e) {
  fail((e as Error).message);
}
// The development builder's port, known before the config is written (it is the chain's sequencer and stream).
const builderPort = values.flashblocks ? await freePort('127.0.0.1') : 0;
const builder = `127.0.0.1:${builderPort}`;
const anvilUrl = `http://127.0.0.1:${anvilPort}`;
const sequencerUrl = `http://127.0.0.1:${sequencerPort}`;
const files = writeDevFiles(dir, {
  port,
  internalPort,
  // With --conditional the chain's sequencer is the development one, anvil behind it the chain RPC.
  sequencer: values.conditional ? sequencerUrl : anvilUrl,
  ...(values.conditional ? { conditional: true, rpc: anvilUrl } : {}),
  sync: values.sync,
  websocket: values.websocket,
  track: values.track,
  ...(values.flashblocks ? { flashblocks: { url: `ws://${builder}`, sequencer: `http://${builder}`, anvil: `http://127.0.0.1:${anvilPort}` } } : {}),
  ...(devTls !== undefined ? { tls: { certFile: devTls.certFile, keyFile: devTls.keyFile } } : {}),
});
let config: ReturnType<typeof loadConfigFile>;
try {
  config = loadConfigFile(files.configFile);
} catch (e) {
  // As txgate says it: every problem on its own line, exit 2.
  if (e instanceof ConfigError) usage(`${files.configFile}: ${e.message}`);
  fail((e as Error).message.replace(/\s*\n\s*/g, '; '));
}
const tlsProblem = tlsStartProblem(config.listen.tls);
if (tlsProblem !== null) fail(tlsProblem);
const accountsProblem = await storeStartProblem(config.accounts, files.configFile);
if (accountsProblem !== null) fail(accountsProblem);
// An accounts file kept from an earlier run whose dev grant predates the conditional send: given it.
let grantAmended = false;
if (values.conditional && !files.accountsCreated) {
  try {
    grantAmended = await grantDevConditional(files.accountsFile);
  } catch (e) {
    fail(
      `${files.accountsFile}: cannot give the dev account's grant conditional: true (${(e as Error).message}); add it with npm run accounts -- grant-set --file ${files.accountsFile} --id dev --chain 4663 --conditional`,
    );
  }
}

let anvil: Anvil;
try {
  anvil = await startAnvil({ port: anvilPort, chainId: 4663, readyWithinMs: 10_000, ...(values.flashblocks ? { extraArgs: ['--no-mining'] } : {}) });
} catch (e) {
  fail(`${(e as Error).message} (choose another port with --anvil-port)`);
}
let publisher: FlashblocksPublisher | null = null;
if (values.flashblocks) {
  try {
    publisher = await new FlashblocksPublisher({ anvil: anvil.url, port: builderPort }).start();
  } catch (e) {
    await anvil.stop();
    fail(`the flashblocks builder did not start on ${builder}: ${(e as Error).message}`);
  }
}
let sequencer: ConditionalSequencer | null = null;
if (values.conditional) {
  try {
    sequencer = await startConditionalSequencer(anvil.url, { port: sequencerPort });
  } catch (e) {
    await anvil.stop();
    fail(`the development sequencer did not start on 127.0.0.1:${sequencerPort}: ${(e as Error).message} (choose another port with --sequencer-port)`);
  }
}
const log = createLogger({ level: config.log.level, pretty: !values.json });
let service: Awaited<ReturnType<typeof startService>>;
try {
  service = await startService(config, log, { pretty: !values.json });
} catch (e) {
  await publisher?.stop();
  await sequencer?.close();
  await anvil.stop();
  const l = listenFailure(e);
  if (l !== null) fail(`cannot listen on ${l.host}:${l.port}: the port is in use; choose another with --${l.internal ? 'internal-port' : 'port'}`);
  fail(`txgate did not start: ${(e as Error).message}`);
}

const devChain = config.chains.find((c) => c.chainId === 4663);
process.stdout.write(
  banner({
    port: service.port,
    internalPort: service.internalPort ?? internalPort,
    anvilUrl: anvil.url,
    sync: devChain?.sync.enabled === true,
    track: devChain?.track.enabled === true,
    websocket: config.websocket.enabled,
    flashblocks: publisher?.url ?? null,
    tls: devTls === undefined ? null : { certFile: devTls.certFile, caFile: devTls.caFile },
    conditional: sequencer === null || devChain?.conditional.enabled !== true ? null : { sequencerUrl: sequencer.url, grantAmended },
    conditionalNotInConfig: sequencer !== null && devChain?.conditional.enabled !== true,
    configFile: files.configFile,
    configWritten: files.configWritten,
    accountsFile: files.accountsFile,
    accountsCreated: files.accountsCreated,
  }),
);

/** How long a stop may take before anvil is killed and the process exits anyway (a drain stuck on a peer must not leave both running). */
const STOP_WITHIN_MS = 15_000;
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => {
    anvil.process.kill('SIGKILL');
    process.exit(1);
  }, STOP_WITHIN_MS).unref();
  await service.stop();
  await publisher?.stop();
  await sequencer?.close();
  await anvil.stop();
  log.flush();
  setImmediate(() => process.exit(0));
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
process.on('SIGHUP', () => void stop());
// `npm start` runs this under a shell that does not pass SIGTERM on: when the process that
// started this one is gone (this one re-parented), or the npm process above that shell is,
// stop too, anvil included.
const parent = process.ppid;
const npm = process.env.npm_lifecycle_event === undefined ? null : parentOf(parent);
setInterval(() => {
  if (process.ppid !== parent || (npm !== null && !alive(npm))) void stop();
}, 250).unref();

/** Gives the dev account's chain-4663 grant `conditional: true` where it lacks it; whether it did. */
async function grantDevConditional(file: string): Promise<boolean> {
  const t = fileTarget(file);
  const doc = await t.read();
  const grant = doc.accounts.find((a) => a.id === 'dev')?.grants.find((g) => g.chainId === 4663);
  if (grant === undefined || grant.conditional === true) return false;
  return (await setGrant(t, 'dev', 4663, { conditional: true })).length > 0;
}

/** The parent of process `pid` (Linux's /proc), or null where it cannot be read. */
function parentOf(pid: number): number | null {
  try {
    // /proc/PID/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) && ppid > 1 ? ppid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
