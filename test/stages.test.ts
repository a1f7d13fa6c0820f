/** Pure stage tests: a context in, a verdict out (no server, no network). */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { parseAccounts } from '../src/accounts/parse.js';
import { buildChains } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { Exit, REJECT } from '../src/errors.js';
import { RateLimiter } from '../src/limits/rate-limiter.js';
import { initCrypto } from '../src/native.js';
import { RequestContext, type BodyResult } from '../src/pipeline/context.js';
import { isJsonContentType } from '../src/http/framing.js';
import { createAuthStage, keySha256 } from '../src/stages/auth.js';
import { createFeeStage, tipVia } from '../src/stages/fee.js';
import { createGrantStage } from '../src/stages/grant.js';
import { createHostStage, hostName, HostTable } from '../src/stages/host.js';
import { createParseStage, idLiteral } from '../src/stages/parse.js';
import { createRateLimitStage } from '../src/stages/rate-limit.js';
import { createRouteStage } from '../src/stages/route.js';
import { createSenderStage } from '../src/stages/sender.js';
import { createSizeCapStage } from '../src/stages/size-cap.js';
import type { DecodedTx } from '../src/tx/types.js';

const config = parseConfig(
  {
    chains: [
      { chainId: 4663, hosts: ['fast.chain-a.example', 'localhost'], sequencers: ['http://127.0.0.1:9'] },
      { chainId: 10, hosts: ['b.example'], sequencers: ['http://127.0.0.1:9'] },
    ],
  },
  '/',
  {},
);
const chains = buildChains(config);
const hosts = new HostTable(chains);

function ctx(o: { host?: string; ct?: string; cl?: number; key?: string; body?: string; read?: BodyResult; set?: Record<string, unknown> } = {}): any {
  const bodyResult: BodyResult = o.read ?? { text: o.body ?? '', bytes: Buffer.byteLength(o.body ?? '') };
  const c = new RequestContext(
    't',
    0,
    { host: o.host ?? 'localhost', json: isJsonContentType(o.ct ?? 'application/json'), declaredBytes: o.cl ?? -1, apiKey: o.key ?? '' },
    { read: () => Promise.resolve(bodyResult) },
  );
  Object.assign(c, { chain: chains[0], ...(o.set ?? {}) });
  if (typeof o.body === 'string') Object.assign(c, { body: { text: o.body, bytes: Buffer.byteLength(o.body) } });
  return c;
}
const reason = (v: unknown) => (v instanceof Exit ? v.reason : 'pass');
/** The context a stage passed on (fails the test on an Exit). */
const ok = (v: unknown): any => {
  assert.ok(!(v instanceof Exit), `expected to pass, got ${(v as Exit).reason}`);
  return v;
};

describe('host', () => {
  const stage = createHostStage(hosts);
  it('strips the port, ignores case and a trailing dot', () => {
    assert.equal(hostName('Fast.Chain-A.Example:8443'), 'fast.chain-a.example');
    assert.equal(hostName('fast.chain-a.example.'), 'fast.chain-a.example');
    assert.equal(hostName('[::1]:80'), '[::1]');
    assert.equal(ok(stage.run(ctx({ host: 'FAST.chain-a.example:80' }))).chain.chainId, 4663);
    assert.equal(ok(stage.run(ctx({ host: 'b.example' }))).chain.chainId, 10);
  });
  it('421 otherwise', () => {
    for (const h of ['', 'evil.example', 'fast.chain-a.example.evil', 'localhost.evil:80']) assert.equal(stage.run(ctx({ host: h })), REJECT.misdirected_host);
  });
});

describe('size cap', () => {
  const stage = createSizeCapStage({ maxBodyBytes: 100 });
  it('refuses a declared Content-Length over the cap without reading', () => {
    let read = false;
    const c = ctx({ cl: 101 });
    c.bodySource = { read: () => ((read = true), Promise.resolve(Buffer.alloc(0))) };
    assert.equal(stage.run(c), REJECT.payload_too_large);
    assert.equal(read, false);
  });
  it('413 when the stream went over the cap; client_closed when it left; else the body', async () => {
    assert.equal(await stage.run(ctx({ read: 'too_large' })), REJECT.payload_too_large);
    assert.equal(await stage.run(ctx({ read: 'aborted' })), REJECT.client_closed);
    const c = ok(await stage.run(ctx({ cl: 5, read: { text: '{}', bytes: 2 } })));
    assert.deepEqual(c.body, { text: '{}', bytes: 2 });
  });
});

describe('parse', () => {
  const stage = createParseStage();
  const p = (body: string, ct?: string) => stage.run(ctx({ body, ...(ct !== undefined ? { ct } : {}) }));
  it('accepts one JSON-RPC 2.0 object and records the id as JSON', () => {
    const c = ok(p('{"jsonrpc":"2.0","id":"x\\"y","method":"m","params":[1]}'));
    assert.deepEqual(c.rpc, { id: 'x"y', idJson: '"x\\"y"', method: 'm', params: [1] });
  });
  it('refuses the rest with its reason', () => {
    assert.equal(reason(p('[]')), 'batch_not_supported');
    assert.equal(reason(p('{')), 'parse_error');
    assert.equal(reason(p('null')), 'invalid_request');
    assert.equal(reason(p('{"jsonrpc":"2.0","id":true,"method":"m","params":[]}')), 'invalid_request');
    assert.equal(reason(p('{"jsonrpc":"2.0","id":1,"method":"m","params":[]}', 'text/json')), 'unsupported_content_type');
    assert.equal(reason(p('{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}')), 'invalid_request');
  });
  it('echoes a number id a double cannot hold exactly as the client wrote it', () => {
    const idOf = (body: string) => ok(p(body)).rpc.idJson;
    assert.equal(idOf('{"jsonrpc":"2.0","id":12345678901234567890,"method":"m","params":[]}'), '12345678901234567890');
    assert.equal(idOf('{"jsonrpc":"2.0","id":1.50,"method":"m","params":[]}'), '1.50');
    assert.equal(idOf('{"jsonrpc":"2.0","id":7,"method":"m","params":[]}'), '7'); // the common case stays JSON.stringify
  });
});

describe('idLiteral (the source text of the top-level id)', () => {
  const big = '18446744073709551615';
  it('finds the top-level member only, the last of duplicates, through escapes and whitespace', () => {
    assert.equal(idLiteral(`{"params":[{"id":1}],"x":{"id":2,"s":"}"},"id":${big},"method":"m"}`), big);
    assert.equal(idLiteral(`{"method":"\\"id\\":5","id":${big}}`), big);
    assert.equal(idLiteral(`{"id":1,"id":${big}}`), big);
    assert.equal(idLiteral(`{"\\u0069d":${big}}`), big);
    assert.equal(idLiteral(` {\n "id" :\t${big} ,"x":[1,{"a":"\\\\"}]}`), big);
    assert.equal(idLiteral('{"jsonrpc":"2.0","method":"m"}'), undefined);
  });
  it('agrees with JSON.parse on random objects (property)', () => {
    const key = fc.oneof(fc.constantFrom('jsonrpc', 'method', 'params', 'idx', 'Id', 'i\\d'), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 3 })), { maxLength: 6 }),
        fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
        fc.nat(),
        (members, id, at) => {
          const parts = members.filter(([k]) => k !== 'id').map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
          parts.splice(at % (parts.length + 1), 0, `"id":${id}`);
          const text = `{${parts.join(',')}}`;
          assert.equal(typeof (JSON.parse(text) as { id: unknown }).id, 'number');
          assert.equal(idLiteral(text), String(id));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('method routing', () => {
  const stage = createRouteStage({ chainIdMaxBodyBytes: 512 });
  const r = (method: string, params: unknown[], bodyLen = 60) =>
    stage.run(ctx({ set: { rpc: { id: 1, idJson: '1', method, params }, body: { text: '', bytes: bodyLen } } }));
  it('answers eth_chainId from configuration', () => {
    const out = r('eth_chainId', []);
    assert.ok(out instanceof Exit);
    assert.equal(out.body('1'), '{"jsonrpc":"2.0","id":1,"result":"0x1237"}');
    assert.equal(reason(r('eth_chainId', [], 513)), 'payload_too_large');
    assert.equal(reason(r('eth_chainId', ['latest'])), 'invalid_params');
  });
  it('passes a hex param, an object (unsigned) and a base58/64 string (Solana?) on to decode', () => {
    assert.equal(ok(r('eth_sendRawTransaction', ['0x02ab'])).rawTx, '0x02ab');
    assert.deepEqual(ok(r('eth_sendRawTransaction', [{ to: '0x' }])).rawTx, { to: '0x' });
    assert.equal(typeof ok(r('eth_sendRawTransaction', ['A'.repeat(88)])).rawTx, 'string');
  });
  it('refuses other params and other methods', () => {
    for (const params of [[], ['0x1'], ['0x', '0x'], [1], ['hello world']]) assert.equal(reason(r('eth_sendRawTransaction', params)), 'invalid_params');
    assert.equal(reason(r('eth_sendTransaction', [])), 'method_not_found');
  });
});

const doc = parseAccounts({
  accounts: [
    {
      id: 'a',
      keySha256: [keySha256('k1')],
      grants: [
        {
          chainId: 4663,
          rateLimit: { perSecond: 1, burst: 2 },
          tipAddresses: ['0xa0ee7a142d267c1f36714e4a8f75612f20a79720'],
          minTipWei: '100',
          feePatterns: [
            { kind: 'transfer' },
            { kind: 'call', to: '0x1111111111111111111111111111111111111111', selector: '0xaabbccdd', receiverArg: 1, amountArg: 0 },
          ],
        },
      ],
    },
    { id: 'off', keySha256: [keySha256('k2')], submissionEnabled: false, grants: [] },
    {
      id: 'free',
      keySha256: [keySha256('k3')],
      allowUntipped: true,
      grants: [{ chainId: 4663, rateLimit: { perSecond: 1, burst: 1 }, tipAddresses: [], minTipWei: '0' }],
    },
  ],
});
const store = { ready: true, stale: false, size: 3, byKeyHash: (h: string) => doc.byHash.get(h), start: async () => {}, close: () => {} };
const acct = (id: string) => doc.accounts.find((a) => a.id === id)!;

describe('auth and grant', () => {
  const auth = createAuthStage(store);
  const grant = createGrantStage();
  it('auth: the account by key hash; 401 for missing/unknown/overlong; 503 before a first load', () => {
    assert.equal(ok(auth.run(ctx({ key: 'k1' }))).account.id, 'a');
    assert.equal(auth.run(ctx({ key: '' })), REJECT.unauthorized);
    assert.equal(auth.run(ctx({ key: 'nope' })), REJECT.unauthorized);
    assert.equal(auth.run(ctx({ key: 'k'.repeat(300) })), REJECT.unauthorized);
    assert.equal(createAuthStage({ ...store, ready: false }).run(ctx({ key: 'k1' })), REJECT.not_ready);
    assert.equal(createAuthStage({ ...store, stale: true }).run(ctx({ key: 'k1' })), REJECT.credentials_stale, 'a stale snapshot: 503, never a 401 or a pass');
  });
  it('grant: 403 disabled, 403 not granted, else the grant of the host chain; the sync method needs a sync grant', () => {
    const send = { rpc: { id: 1, idJson: '1', method: 'eth_sendRawTransaction', params: [] } };
    assert.equal(ok(grant.run(ctx({ set: { ...send, account: acct('a') } }))).grant.chainId, 4663);
    assert.equal(grant.run(ctx({ set: { ...send, account: acct('off') } })), REJECT.submission_disabled);
    assert.equal(grant.run(ctx({ set: { ...send, account: acct('a'), chain: chains[1] } })), REJECT.chain_not_granted);
    const sync = { rpc: { ...send.rpc, method: 'eth_sendRawTransactionSync' } };
    assert.equal(grant.run(ctx({ set: { ...sync, account: acct('a') } })), REJECT.sync_not_granted);
  });
});

describe('fee admission', () => {
  before(() => initCrypto());
  const g = acct('a').grants.get(4663)!;
  const tx = (t: Partial<DecodedTx>): DecodedTx => ({
    type: 2,
    hash: '0x',
    sender: () => '0x',
    chainId: 4663n,
    nonce: 0n,
    to: null,
    value: 0n,
    data: new Uint8Array(),
    gasLimit: 21000n,
    ...t,
  });
  const word = (hex: string) => hex.replace(/^0x/, '').padStart(64, '0');
  const call = (receiver: string, amount: bigint, extra = '') => Buffer.from('aabbccdd' + word(amount.toString(16)) + word(receiver) + extra, 'hex');
  it('transfer: a tip address and value ≥ min', () => {
    assert.equal(tipVia(tx({ to: '0xa0ee7a142d267c1f36714e4a8f75612f20a79720', value: 100n }), g)?.via, 'transfer');
    assert.equal(tipVia(tx({ to: '0xa0ee7a142d267c1f36714e4a8f75612f20a79720', value: 99n }), g), null);
  });
  it('call: contract, selector, receiver word (upper 12 bytes zero) and amount word', () => {
    const to = '0x1111111111111111111111111111111111111111';
    assert.equal(tipVia(tx({ to, data: call('a0ee7a142d267c1f36714e4a8f75612f20a79720', 100n) }), g)?.via, 'call');
    assert.equal(tipVia(tx({ to, data: call('a0ee7a142d267c1f36714e4a8f75612f20a79720', 99n) }), g), null);
    assert.equal(tipVia(tx({ to, data: call('01' + '00'.repeat(11) + 'a0ee7a142d267c1f36714e4a8f75612f20a79720', 100n) }), g), null);
    assert.equal(tipVia(tx({ to, data: call('a0ee7a142d267c1f36714e4a8f75612f20a79720', 100n).subarray(0, 67) }), g), null);
    assert.equal(tipVia(tx({ to: '0x2222222222222222222222222222222222222222', data: call('a0ee7a142d267c1f36714e4a8f75612f20a79720', 100n) }), g), null);
  });
  it('untipped plain transfers only with both permissions', () => {
    const free = acct('free');
    const plain = tx({ to: '0x3333333333333333333333333333333333333333' });
    const run = (deployment: boolean, t: DecodedTx) =>
      createFeeStage({ allowUntipped: deployment }).run(ctx({ set: { account: free, grant: free.grants.get(4663), tx: t } }));
    assert.equal(ok(run(true, plain)).fee.via, 'untipped');
    assert.equal(reason(run(false, plain)), 'fee_rejected');
    assert.equal(reason(run(true, tx({ to: plain.to, data: Uint8Array.from([1]) }))), 'fee_rejected');
    assert.equal(reason(run(true, tx({ to: null }))), 'fee_rejected');
  });
});

describe('sender allow-list stage', () => {
  const listed = parseAccounts({
    accounts: [
      {
        id: 's',
        keySha256: [keySha256('k9')],
        grants: [
          { chainId: 4663, rateLimit: { perSecond: 1, burst: 1 }, tipAddresses: [], minTipWei: '0', senders: ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8'] },
        ],
      },
    ],
  }).accounts[0]!;
  const stage = createSenderStage();
  const withSender = (sender: () => string | Exit) => ({ hash: '0x', sender });
  it('a grant without a list: nothing recovered (sender() is never called), sender null', () => {
    const a = acct('a');
    const passed = ok(stage.run(ctx({ set: { account: a, grant: a.grants.get(4663), tx: withSender(() => assert.fail('recovered without a list')) } })));
    assert.equal(passed.sender, null);
  });
  it('a listed grant: the listed sender passes (and is kept for the audit line); any other is 403 sender_not_allowed', () => {
    const grant = listed.grants.get(4663)!;
    const run = (sender: string | Exit) => stage.run(ctx({ set: { account: listed, grant, tx: withSender(() => sender) } }));
    assert.equal(ok(run('0x70997970c51812dc3a010c7d01b50e0d17dc79c8')).sender, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
    assert.equal(run('0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc'), REJECT.sender_not_allowed);
    assert.equal(run(REJECT.invalid_signature), REJECT.invalid_signature, 'a signature that does not recover is refused as such');
  });
  it('the accounts file: senders must be a non-empty list of addresses', () => {
    const grant = (senders: unknown) => ({
      accounts: [
        { id: 'x', keySha256: [keySha256('kx')], grants: [{ chainId: 1, rateLimit: { perSecond: 1, burst: 1 }, tipAddresses: [], minTipWei: '0', senders }] },
      ],
    });
    assert.throws(() => parseAccounts(grant([])), /grants\[0\]\.senders: must be a non-empty array/);
    assert.throws(() => parseAccounts(grant(['0x12'])), /grants\[0\]\.senders\[0\]/);
    assert.equal(
      parseAccounts(grant(['0x70997970C51812dc3A010C7d01b50e0d17dc79C8']))
        .accounts[0]!.grants.get(1)!
        .senders!.has('0x70997970c51812dc3a010c7d01b50e0d17dc79c8'),
      true,
    );
    assert.equal(acct('a').grants.get(4663)!.senders, null);
  });
});

describe('rate limit stage', () => {
  it('spends a token per request, 429 with headers when empty, nothing for duplicates', () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    const dups = new Set(['0xdup']);
    const stage = createRateLimitStage(limiter, { isDuplicate: (_c, h) => dups.has(h) });
    const a = acct('a');
    const c = (hash: string) => ctx({ set: { account: a, grant: a.grants.get(4663), tx: { hash } } });
    assert.equal(ok(stage.run(c('0x1'))).quota.remaining, 1);
    assert.equal(ok(stage.run(c('0x2'))).quota.remaining, 0);
    assert.equal(reason(stage.run(c('0xdup'))), 'pass');
    const r = stage.run(c('0x3'));
    assert.ok(r instanceof Exit);
    assert.equal(r.status, 429);
    assert.deepEqual(r.headers, [
      ['retry-after', '1'],
      ['x-ratelimit-limit', '2'],
      ['x-ratelimit-remaining', '0'],
    ]);
    assert.equal(JSON.parse(r.body('1')).error.data.retryAfterMs, 1000);
    now += 1000;
    assert.equal(reason(stage.run(c('0x4'))), 'pass');
  });
});
