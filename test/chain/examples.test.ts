/**
 * Every configuration in the README and docs/ is a file under examples/, shown by `npm run
 * readme` (docs/clients.md and docs/operations.md carry them), and
 * run here as written against anvil (the quick-start chain): only the addresses are moved to
 * this run's (anvil 127.0.0.1:8545 and a second sequencer 127.0.0.1:8546 to this run's anvils,
 * the listeners to free ports, the accounts to the development accounts, the database URL to a
 * throwaway PostgreSQL). Each txgate is the real CLI; each run submits a signed transaction
 * with the development key and reads its receipt from the chain.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, type Hex, http } from 'viem';
import WebSocket from 'ws';
import { dbTarget } from '../../src/accounts/postgres/admin.js';
import { createAccount } from '../../src/accounts/admin.js';
import { parseAccountsText } from '../../src/accounts/file-text.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { loadConfigFile } from '../../src/config/config.js';
import { type Anvil, ANVIL_TIP_ADDRESS, startAnvil } from '../../src/dev/anvil.js';
import { DEV_API_KEY, DEV_MIN_TIP_WEI, writeDevFiles, DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { initCrypto } from '../../src/base/native.js';
import { EXAMPLES_DIR, exampleFiles, examplesShown, renderExamples } from '../../scripts/readme-examples.js';
import { eventually, issuedKeys } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { TestPostgres } from '../../src/dev/postgres.js';
import { freePort } from '../../src/base/free-port.js';
import { type CliProcess, startCli } from '../support/processes.js';
import { signNext } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';

keysNeverLogged();

const ROOT = join(import.meta.dirname, '../../..');
/** The pages that may show configuration: the README and every page of docs/. */
const PAGES = new Map(
  [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ].map((p) => [p, readFileSync(join(ROOT, p), 'utf8')]),
);
let a: Anvil;
let b: Anvil;
let devAccounts: string;
let dead: number;

before(async () => {
  await initCrypto();
  issuedKeys.push(DEV_API_KEY); // public, development only; still never logged
  a = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
  b = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
  dead = await freePort();
  // npm start's development accounts (the development key; its grant allows the sync send).
  devAccounts = writeDevFiles(tempDir('txgate-ex-dev-'), { port: 1, internalPort: 2, sequencer: 'http://127.0.0.1:3' }).accountsFile;
});
after(async () => {
  await a?.stop();
  await b?.stop();
});

const hostPort = (url: string) => new URL(url).host;

/**
 * The example as written, moved to this run's addresses; `second` is where 127.0.0.1:8546 goes
 * (`first` where 127.0.0.1:8545 goes: anvil a by default).
 */
async function materialize(name: string, o: { first?: string; second?: string; accounts?: Record<string, unknown> } = {}): Promise<string> {
  const text = readFileSync(join(EXAMPLES_DIR, name), 'utf8')
    .replaceAll('127.0.0.1:8545', o.first ?? hostPort(a.url))
    .replaceAll('127.0.0.1:8546', o.second ?? hostPort(b.url));
  const cfg = JSON.parse(text) as Record<string, any>;
  cfg.listen = { ...cfg.listen, host: '127.0.0.1', port: await freePort() };
  cfg.internal = { ...cfg.internal, host: '127.0.0.1', port: await freePort() };
  cfg.accounts = o.accounts ?? { ...cfg.accounts, file: devAccounts };
  const dir = tempDir('txgate-ex-');
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(cfg));
  return file;
}

async function withCli<T>(file: string, body: (g: CliProcess) => Promise<T>): Promise<T> {
  const g = await startCli(file);
  try {
    await eventually(async () => (await send({ port: g.port, method: 'GET', path: '/ready' })).status === 200, 10_000);
    return await body(g);
  } finally {
    g.proc.kill('SIGTERM');
    await new Promise((r) => g.proc.once('exit', r));
  }
}

/** What a development transfer pays: the development minimum tip, to the development tip address. */
const DEV_TIP = { to: ANVIL_TIP_ADDRESS as Hex, value: DEV_MIN_TIP_WEI };

async function receiptStatus(hash: string, chain: Anvil = a): Promise<string> {
  const r = await createPublicClient({ transport: http(chain.url) }).waitForTransactionReceipt({ hash: hash as Hex, pollingInterval: 50, timeout: 10_000 });
  return r.status;
}

/** Submits over HTTP with the development key; the hash it answered. */
async function submit(port: number, raw: Hex, method = 'eth_sendRawTransaction'): Promise<any> {
  const r = await rpc(port, method, [raw], { key: DEV_API_KEY });
  assert.equal(r.status, 200, r.text);
  return r.json.result;
}

describe('the docs show the examples', () => {
  it('every example file is shown once, in the README or docs/, rendered from the file (npm run readme); no configuration snippet is written by hand', () => {
    const shown: string[] = [];
    for (const [page, text] of PAGES) {
      assert.equal(renderExamples(text), text, `${page} is out of date: run npm run readme`);
      shown.push(...examplesShown(text));
      // Outside the example blocks, no JSON block is a configuration (the /tip-addresses answer is not).
      const outside = text.replace(/<!-- example:([\w.-]+):start -->[\s\S]*?<!-- example:\1:end -->/g, '');
      for (const m of outside.matchAll(/```json\n([\s\S]*?)```/g))
        assert.doesNotMatch(m[1]!, /"(chains|listen|accounts|websocket|sync)"\s*:/, `${page}: a configuration snippet outside examples/:\n${m[1]}`);
    }
    assert.deepEqual(shown.sort(), exampleFiles());
  });
  it('every configuration example loads as written; the accounts example validates', () => {
    for (const f of exampleFiles().filter((x) => x !== 'accounts.json')) loadConfigFile(join(EXAMPLES_DIR, f));
    const acc = parseAccountsText(readFileSync(join(EXAMPLES_DIR, 'accounts.json'), 'utf8'));
    assert.ok(acc.ok, JSON.stringify(acc));
  });
});

describe('each example, run against anvil', () => {
  it('txgate.json with accounts.json (the development key hash in place of the placeholder): a submission executes', async () => {
    const doc = readFileSync(join(EXAMPLES_DIR, 'accounts.json'), 'utf8').replace('0'.repeat(64), keySha256(DEV_API_KEY));
    const dir = tempDir('txgate-ex-acc-');
    writeFileSync(join(dir, 'accounts.json'), doc);
    const file = await materialize('txgate.json', { accounts: { file: join(dir, 'accounts.json') } });
    await withCli(file, async (g) => {
      const hash = await submit(g.port, await signNext(a.url, 1, DEV_TIP));
      assert.equal(await receiptStatus(hash), 'success');
    });
  });

  it('failover.json: on the first sequencer while it is up; on the second when the first is down', async () => {
    await withCli(await materialize('failover.json'), async (g) => {
      const hash = await submit(g.port, await signNext(a.url, 2, DEV_TIP));
      assert.equal(await receiptStatus(hash), 'success');
    });
    await withCli(await materialize('failover.json', { first: `127.0.0.1:${dead}` }), async (g) => {
      const hash = await submit(g.port, await signNext(b.url, 3, DEV_TIP));
      assert.equal(await receiptStatus(hash, b), 'success');
    });
  });

  it('fanout.json: one submission reaches both sequencers', async () => {
    await withCli(await materialize('fanout.json'), async (g) => {
      // A signer unused on both chains: the same nonce is valid on each.
      const raw = await signNext(a.url, 4, DEV_TIP);
      const hash = await submit(g.port, raw);
      assert.equal(await receiptStatus(hash, a), 'success');
      assert.equal(await receiptStatus(hash, b), 'success');
    });
  });

  for (const name of ['sync.json', 'sync-receipt.json'])
    it(`${name}: eth_sendRawTransactionSync answers with the executed receipt`, async () => {
      await withCli(await materialize(name), async (g) => {
        const receipt = await submit(g.port, await signNext(a.url, name === 'sync.json' ? 5 : 6, DEV_TIP), 'eth_sendRawTransactionSync');
        assert.equal(receipt.status, '0x1', JSON.stringify(receipt));
        assert.equal(await receiptStatus(receipt.transactionHash), 'success');
      });
    });

  it('websocket.json: a submission over the WebSocket transport executes', async () => {
    await withCli(await materialize('websocket.json'), async (g) => {
      const ws = new WebSocket(`ws://127.0.0.1:${g.port}/`, { headers: { 'x-api-key': DEV_API_KEY, host: 'localhost' } });
      await new Promise((res, rej) => {
        ws.once('open', res);
        ws.once('error', rej);
      });
      try {
        const raw = await signNext(a.url, 1, DEV_TIP);
        const answer = new Promise<any>((res) => ws.once('message', (m) => res(JSON.parse(m.toString()))));
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_sendRawTransaction', params: [raw] }));
        const r = await answer;
        assert.equal(r.id, 7);
        assert.equal(await receiptStatus(r.result), 'success');
      } finally {
        ws.close();
      }
    });
  });

  describe('fleet.json (the PostgreSQL store)', () => {
    let pg: TestPostgres;
    before(async () => {
      pg = await TestPostgres.start();
    });
    after(async () => {
      await pg.destroy();
    });
    it('an edge with the example config serves an account created on the database', async () => {
      pg.psql("CREATE ROLE txgate_edge LOGIN PASSWORD 'change-me-edge'", 'postgres');
      const admin = dbTarget(pg.url());
      let key: string;
      try {
        await admin.migrate('txgate_edge');
        key = await createAccount(admin, 'acme', [
          { chainId: DEV_CHAIN_ID, rateLimit: { perSecond: 100, burst: 200 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: DEV_MIN_TIP_WEI.toString() },
        ]);
        issuedKeys.push(key);
      } finally {
        await admin.close();
      }
      const text = readFileSync(join(EXAMPLES_DIR, 'fleet.json'), 'utf8').replace('db.internal:5432', `127.0.0.1:${pg.port}`);
      const dir = tempDir('txgate-ex-fleet-');
      writeFileSync(join(dir, 'fleet.json'), text);
      const file = await materialize('fleet.json', { accounts: JSON.parse(text).accounts });
      await withCli(file, async (g) => {
        const r = await rpc(g.port, 'eth_sendRawTransaction', [await signNext(a.url, 2, DEV_TIP)], { key });
        assert.equal(r.status, 200, r.text);
        assert.equal(await receiptStatus(r.json.result), 'success');
      });
    });
  });
});

// The examples that name ../.dev/accounts.json run beside npm start: the path resolves to it.
describe('the quick-start examples', () => {
  it('name npm start’s accounts file and listen beside it (127.0.0.1:8081, internal 9465)', () => {
    for (const f of ['failover.json', 'fanout.json', 'sync.json', 'sync-receipt.json', 'websocket.json']) {
      const c = loadConfigFile(join(EXAMPLES_DIR, f));
      assert.equal(c.accounts.file, join(EXAMPLES_DIR, '..', '.dev', 'accounts.json'), f);
      assert.deepEqual([c.listen.host, c.listen.port, c.internal.port], ['127.0.0.1', 8081, 9465], f);
    }
  });
});
