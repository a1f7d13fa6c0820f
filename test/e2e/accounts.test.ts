/**
 * Accounts over real HTTP on the real server: 401 / 403 / 429, tip addresses with ETag and 304,
 * hot reload (revocation within 1 s with a request in flight completing, a broken file keeping
 * the previous accounts), the onboarding commands end to end, and the limits on one account.
 * The fleet edge's row check, fuzzed: test/property/row-check-fuzz.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { ACCOUNT_LIMITS } from '../../src/accounts/limits.js';
import { AccountsFileError, parseAccounts } from '../../src/accounts/parse.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { accountsDoc, eventually, issuedKeys, newKey, TIP, type AccountIn } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

let stub: StubSequencer;
const acme = newKey();
const acmeOld = newKey();
const off = newKey();
const limited = newKey();
const callKey = newKey();
const CALL_CONTRACT = '0x1111111111111111111111111111111111111111';

const accounts: AccountIn[] = [
  { id: 'acme', keys: [acme, acmeOld] },
  { id: 'off', keys: [off], submissionEnabled: false },
  { id: 'limited', keys: [limited], grants: [{ rateLimit: { perSecond: 0.5, burst: 3 } }] },
  {
    id: 'caller',
    keys: [callKey],
    allowUntipped: true,
    grants: [
      { feePatterns: [{ kind: 'call', to: CALL_CONTRACT, selector: '0x12345678', receiverArg: 0, amountArg: 1 }] },
      { chainId: 10, tipAddresses: ['0x2222222222222222222222222222222222222222'], minTipWei: '5' },
    ],
  },
];

const gate = useGate(async () => {
  stub = await new StubSequencer().start();
  return { sequencers: [stub.url], accounts, config: { allowUntipped: true } };
});
after(async () => {
  await stub.stop();
});

const submit = async (key: string | undefined, opts: { host?: string; nonce?: number } = {}) =>
  rpc(gate.port, 'eth_sendRawTransaction', [await sign1559({ nonce: opts.nonce ?? 0 })], {
    ...(key !== undefined ? { key } : {}),
    ...(opts.host !== undefined ? { host: opts.host } : {}),
  });

describe('auth', () => {
  it('401 without a key, with a wrong key; the message never echoes the key', async () => {
    for (const key of [undefined, 'txg_wrong_key_' + 'a'.repeat(30)]) {
      const r = await submit(key);
      assert.equal(r.status, 401);
      assert.equal(r.json.error.data.reason, 'unauthorized');
      assert.equal(r.json.error.code, -32000);
      if (key !== undefined) assert.ok(!r.text.includes(key));
    }
  });
  it('200 with either of two keys of one account (rotation)', async () => {
    const a = await submit(acme, { nonce: 1 });
    const b = await submit(acmeOld, { nonce: 2 });
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
  });
  it('403 submission_disabled for a disabled account', async () => {
    const r = await submit(off);
    assert.equal(r.status, 403);
    assert.equal(r.json.error.data.reason, 'submission_disabled');
  });
  it("403 chain_not_granted on another chain's host", async () => {
    const r = await submit(acme, { host: 'fast.chain-b.example' });
    assert.equal(r.status, 403);
    assert.equal(r.json.error.data.reason, 'chain_not_granted');
  });
});

describe('rate limit', () => {
  it('burst+1 requests give exactly one 429, with Retry-After and the X-RateLimit headers', async () => {
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await submit(limited, { nonce: 100 + i }));
    const statuses = replies.map((r) => r.status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const r = replies[3]!;
    assert.equal(r.json.error.code, -32005);
    assert.equal(r.json.error.data.reason, 'rate_limited');
    assert.ok(r.json.error.data.retryAfterMs > 0 && r.json.error.data.retryAfterMs <= 2000);
    assert.equal(r.headers['retry-after'], '2');
    assert.equal(r.headers['x-ratelimit-limit'], '3');
    assert.equal(r.headers['x-ratelimit-remaining'], '0');
  });
  it('a resubmission of bytes just accepted spends no token', async () => {
    const k = newKey();
    gate.writeAccounts(accountsDoc([...accounts, { id: 'dup', keys: [k], grants: [{ rateLimit: { perSecond: 0.1, burst: 1 } }] }]));
    await eventually(async () => (await submit(k, { nonce: 500 })).status !== 401, 2000);
    const raw = await sign1559({ nonce: 501 });
    const again = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key: k });
    // The bucket (burst 1) was spent by the first accepted request above; this one is new → 429.
    assert.equal(again.status, 429);
    const first = await sign1559({ nonce: 500 });
    const dup = await rpc(gate.port, 'eth_sendRawTransaction', [first], { key: k });
    assert.equal(dup.status, 200, 'the same bytes again are answered without spending a token');
    gate.writeAccounts(accountsDoc(accounts));
  });
});

describe('GET /tip-addresses', () => {
  const get = (key: string | undefined, opts: { query?: string; host?: string; etag?: string } = {}) =>
    send({
      port: gate.port,
      method: 'GET',
      path: '/tip-addresses' + (opts.query ?? ''),
      host: opts.host ?? 'localhost',
      headers: { ...(key !== undefined ? { 'x-api-key': key } : {}), ...(opts.etag !== undefined ? { 'if-none-match': opts.etag } : {}) },
    });

  it("lists the account's receivers for the host's chain, checksummed, with caching headers", async () => {
    const r = await get(acme);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, {
      chainId: '0x1237',
      tipAddresses: [TIP],
      minTipWei: '1000000000000',
      feePatterns: [{ kind: 'transfer' }],
      txTypes: ['0x02'],
      untippedAllowed: false,
      senderAllowList: false,
    });
    assert.match(String(r.headers.etag), /^"[A-Za-z0-9_-]{22}"$/);
    assert.match(String(r.headers['cache-control']), /^private, max-age=\d+$/);
  });
  it('honours If-None-Match with 304 and no body', async () => {
    const first = await get(acme);
    const r = await get(acme, { etag: String(first.headers.etag) });
    assert.equal(r.status, 304);
    assert.equal(r.text, '');
    assert.equal(r.headers.etag, first.headers.etag);
  });
  it('untippedAllowed is the account and the deployment together; call patterns are listed', async () => {
    const r = await get(callKey);
    assert.equal(r.json.untippedAllowed, true);
    assert.deepEqual(r.json.feePatterns, [
      { kind: 'call', to: '0x1111111111111111111111111111111111111111', selector: '0x12345678', receiverArg: 0, amountArg: 1 },
    ]);
  });
  it('?chainId= names another granted chain, decimal or hex', async () => {
    for (const q of ['?chainId=10', '?chainId=0xa']) {
      const r = await get(callKey, { query: q });
      assert.equal(r.status, 200);
      assert.equal(r.json.chainId, '0xa');
      assert.equal(r.json.minTipWei, '5');
    }
  });
  it('401 / 403 as for submission', async () => {
    assert.equal((await get(undefined)).status, 401);
    assert.equal((await get('nope')).status, 401);
    assert.equal((await get(off)).status, 403);
    const r = await get(acme, { query: '?chainId=10' });
    assert.equal(r.status, 403);
    assert.equal(r.json.error.data.reason, 'chain_not_granted');
    assert.equal(r.json.error.message, 'This account is not granted chain 0xa'); // the chain asked for, not the host's
    assert.equal((await get(acme, { host: 'unknown.example' })).status, 421);
    assert.equal((await get(acme, { query: '?chainId=abc' })).status, 400);
  });
});

describe('hot reload', () => {
  it('a revoked key is refused within 1 s while a request in flight completes', async () => {
    const k = newKey();
    gate.writeAccounts(accountsDoc([...accounts, { id: 'rev', keys: [k] }]));
    await eventually(async () => (await submit(k, { nonce: 900 })).status === 200, 2000);
    stub.delayMs = 400;
    const inFlight = submit(k, { nonce: 901 });
    await new Promise((r) => setTimeout(r, 100)); // the request has passed auth and is forwarding
    const t0 = Date.now();
    gate.writeAccounts(accountsDoc(accounts));
    await eventually(async () => (await submit(k, { nonce: 902 })).status === 401, 1000);
    assert.ok(Date.now() - t0 <= 1000);
    stub.delayMs = 0;
    const r = await inFlight;
    assert.equal(r.status, 200, 'the request in flight completed with its outcome');
  });
  it('a broken file is refused with one log line naming the problems; the previous accounts stay', async () => {
    const before = gate.logs.length;
    // A key hash listed twice in one account (two accounts claiming one: test/unit/key-claims.test.ts).
    const broken = accountsDoc(accounts) as { accounts: { keySha256: string[] }[] };
    broken.accounts[0]!.keySha256.push(broken.accounts[0]!.keySha256[0]!);
    gate.writeAccounts(broken);
    const line = (await eventually(() => gate.logs.slice(before).find((l) => l.includes('accounts file refused')), 2000)) as string;
    assert.match(line, /duplicate key hash/);
    assert.ok(!line.includes(acme));
    gate.writeAccounts('{ not json');
    await eventually(() => gate.logs.slice(before).filter((l) => l.includes('accounts file refused')).length >= 2, 2000);
    assert.equal((await submit(acme, { nonce: 3 })).status, 200, 'the last good accounts are still in force');
    gate.writeAccounts(accountsDoc(accounts));
  });
  it('SIGHUP says what it found even when nothing changed', async () => {
    await new Promise((r) => setTimeout(r, 1200)); // the last write was loaded
    const before = gate.logs.length;
    process.kill(process.pid, 'SIGHUP');
    const line = await eventually(() => gate.logs.slice(before).find((l) => l.includes('accounts reloaded: unchanged')), 2000);
    assert.equal(JSON.parse(line as string).trigger, 'SIGHUP');
  });
  it('one change, one log line: a broken file seen by the watcher and the poll is refused once', async () => {
    await new Promise((r) => setTimeout(r, 1200));
    const before = gate.logs.length;
    gate.writeAccounts('{ "accounts": 1 }');
    await eventually(() => gate.logs.slice(before).some((l) => l.includes('accounts file refused')), 2000);
    await new Promise((r) => setTimeout(r, 2200)); // two more poll periods
    assert.equal(gate.logs.slice(before).filter((l) => l.includes('accounts file refused')).length, 1);
    gate.writeAccounts(accountsDoc(accounts)); // the last good content again: unchanged, silently
  });
});

describe('onboarding commands', () => {
  const cli = (args: string[], input?: string) =>
    execFileSync(process.execPath, [join(import.meta.dirname, '../../scripts/accounts.js'), ...args, '--file', gate.accountsFile], {
      encoding: 'utf8',
      ...(input !== undefined ? { input } : {}),
    });
  const keyFrom = (out: string) => {
    const m = /(txg_[A-Za-z0-9_-]{43})/.exec(out);
    assert.ok(m, out);
    issuedKeys.push(m[1]!);
    return m[1]!;
  };

  it('create → the key submits to its granted chain; disable → 403; enable; revoke → 401; grant removal → 403', async () => {
    gate.writeAccounts(accountsDoc(accounts));
    const key = keyFrom(
      cli(['create', '--id', 'newco', '--chain', String(DEV_CHAIN_ID), '--rate', '50', '--burst', '10', '--tip', TIP, '--min-tip', '1000000000000']),
    );
    assert.match(key, /^txg_[A-Za-z0-9_-]{43}$/);
    assert.ok(!readFileSync(gate.accountsFile, 'utf8').includes(key), 'the key is never written');
    assert.ok(readFileSync(gate.accountsFile, 'utf8').includes(keySha256(key)));
    await eventually(async () => (await submit(key, { nonce: 40 })).status === 200, 2000);

    cli(['disable', '--id', 'newco']);
    await eventually(async () => (await submit(key, { nonce: 41 })).status === 403, 2000);
    cli(['enable', '--id', 'newco']);
    await eventually(async () => (await submit(key, { nonce: 42 })).status === 200, 2000);

    const key2 = keyFrom(cli(['rotate-key', '--id', 'newco']));
    await eventually(async () => (await submit(key2, { nonce: 43 })).status === 200, 2000);
    assert.equal((await submit(key, { nonce: 44 })).status, 200, 'the old key stays valid until revoked');
    cli(['revoke-key', '--id', 'newco', '--key-stdin'], key);
    await eventually(async () => (await submit(key, { nonce: 45 })).status === 401, 2000);
    assert.equal((await submit(key2, { nonce: 46 })).status, 200);

    cli(['grant-add', '--id', 'newco', '--chain', '10', '--rate', '5', '--burst', '5', '--tip', TIP, '--min-tip', '1']);
    cli(['grant-remove', '--id', 'newco', '--chain', String(DEV_CHAIN_ID)]);
    await eventually(async () => (await submit(key2, { nonce: 47 })).status === 403, 2000);
    assert.match(cli(['list']), /newco\tenabled\tkeys [0-9a-f]{12}\tchains 10/);
  });
  it("create --senders writes the grant's sender allow-list (validated as the service does)", () => {
    keyFrom(
      cli([
        'create',
        '--id',
        'signers',
        '--chain',
        String(DEV_CHAIN_ID),
        '--rate',
        '5',
        '--burst',
        '5',
        '--tip',
        TIP,
        '--min-tip',
        '1',
        '--senders',
        '0x70997970C51812dc3A010C7d01b50e0d17dc79C8, 0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      ]),
    );
    const doc = JSON.parse(readFileSync(gate.accountsFile, 'utf8'));
    assert.deepEqual(doc.accounts.find((a: { id: string }) => a.id === 'signers').grants[0].senders, [
      '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    ]);
    assert.throws(
      () => cli(['grant-add', '--id', 'signers', '--chain', '10', '--rate', '5', '--burst', '5', '--tip', TIP, '--min-tip', '1', '--senders', '0x1234']),
      /senders\[0\]/,
    );
  });
});

describe('limits on one account', () => {
  const grant = (tips: unknown[]) => ({ chainId: DEV_CHAIN_ID, rateLimit: { perSecond: 1, burst: 1 }, tipAddresses: tips, minTipWei: '0' });
  const addr = (i: number) => '0x' + i.toString(16).padStart(40, '0');
  const refusal = (doc: unknown): string => {
    try {
      parseAccounts({ accounts: [doc] });
    } catch (e) {
      assert.ok(e instanceof AccountsFileError);
      return e.message;
    }
    return '';
  };

  it('the file loader (parseAccounts) refuses an account past a limit, and takes one at it', () => {
    const keys = Array.from({ length: ACCOUNT_LIMITS.keys + 1 }, (_, i) => keySha256(String(i)));
    assert.match(refusal({ id: 'k', keySha256: keys, grants: [] }), /keySha256: 65 entries, more than the 64/);
    assert.equal(refusal({ id: 'k', keySha256: keys.slice(1), grants: [] }), '');
    const tips = Array.from({ length: ACCOUNT_LIMITS.tipAddresses + 1 }, (_, i) => addr(i + 1));
    assert.match(refusal({ id: 't', keySha256: [], grants: [grant(tips)] }), /tipAddresses: 100001 entries, more than the 100000/);
    assert.equal(refusal({ id: 't', keySha256: [], grants: [grant(tips.slice(1))] }), '', 'the documented maximum is accepted');
    assert.match(refusal({ id: 'g', keySha256: [], grants: Array.from({ length: 65 }, (_, i) => ({ ...grant([]), chainId: i + 1 })) }), /grants: 65 entries/);
    assert.match(
      refusal({ id: 'b', keySha256: [], grants: [], note: 'x'.repeat(ACCOUNT_LIMITS.docBytes) }),
      /the document is \d+ bytes of JSON, more than the 8388608/,
    );
    // A million bad addresses: one capped refusal, not a million lines.
    const msg = refusal({ id: 'm', keySha256: [], grants: [grant(Array.from({ length: 100_000 }, () => 'nope'))] });
    assert.match(msg, /… and 99980 more problems/);
    assert.ok(msg.length < 5_000);
  });

  it('the onboarding CLI refuses a change past a limit (a 65th key), writing nothing', () => {
    const dir = tempDir('txgate-limits-');
    const file = join(dir, 'accounts.json');
    const keys = Array.from({ length: ACCOUNT_LIMITS.keys }, (_, i) => keySha256(`k${i}`));
    writeFileSync(file, JSON.stringify({ accounts: [{ id: 'full', keySha256: keys, grants: [grant([TIP])] }] }));
    const before = readFileSync(file, 'utf8');
    assert.throws(
      () =>
        execFileSync(process.execPath, [join(import.meta.dirname, '../../scripts/accounts.js'), 'rotate-key', '--id', 'full', '--file', file], {
          stdio: 'pipe',
          encoding: 'utf8',
        }),
      (e: { stderr?: string }) => /keySha256: 65 entries, more than the 64 one account may hold/.test(e.stderr ?? ''),
    );
    assert.equal(readFileSync(file, 'utf8'), before);
  });
});
