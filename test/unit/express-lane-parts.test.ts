/**
 * The express lane's parts without a chain: Nitro's submission (the message bytes, the EIP-191
 * signature cross-checked with viem's independent implementation), the endpoint's answers in
 * outcome terms (Nitro's exact wordings), ordered sequence numbers, the key's custody, the
 * configuration section and the grant field. The readers of peers: test/e2e/express-lane-readers.test.ts.
 */
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { before, describe, it } from 'node:test';
import { concat, type Hex, keccak256, pad, recoverMessageAddress, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { parseAccounts } from '../../src/accounts/parse.js';
import { parseConfig } from '../../src/config/config.js';
import { ANVIL_KEYS } from '../../src/dev/anvil.js';
import { interpret } from '../../src/upstreams/http/http-upstream.js';
import { ExpressSend, readLaneUpstream } from '../../src/forward/express-send.js';
import { Attempts } from '../../src/forward/attempts.js';
import { ExpressLanes } from '../../src/express-lane/lanes.js';
import type { LaneSubmission } from '../../src/express-lane/lane.js';
import { REJECT, result } from '../../src/base/errors.js';
import type { Answer, Upstream } from '../../src/upstreams/upstream.js';
import { pino } from 'pino';
import { ControllerKey, loadControllerKey } from '../../src/express-lane/key.js';
import { OrderedSequence } from '../../src/express-lane/sequence.js';
import { DONT_CARE_SEQUENCE, messageBytes, SEND_METHOD, submissionParams } from '../../src/express-lane/submission.js';
import { initCrypto } from '../../src/base/native.js';
import { sign1559 } from '../support/txs.js';
import { tempDir } from '../support/temp-dir.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const KEY = ANVIL_KEYS[4] as Hex;
const AUCTION = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
let key: ControllerKey;

before(async () => {
  await initCrypto();
  key = new ControllerKey(Buffer.from(KEY.slice(2), 'hex'));
});

describe('the submission, as timeboost/types.go builds it', () => {
  it('the message bytes: domain, chain id, auction, round, sequence, transaction', async () => {
    const tx = await sign1559({ nonce: 7 });
    const f = { chainId: 42161n, auction: AUCTION, round: 1234n, sequence: 5n, tx: Buffer.from(tx.slice(2), 'hex') };
    const want = concat([
      keccak256(toHex('TIMEBOOST_BID')),
      pad(toHex(42161n), { size: 32 }),
      AUCTION,
      pad(toHex(1234n), { size: 8 }),
      pad(toHex(5n), { size: 8 }),
      tx,
    ]);
    assert.equal(toHex(messageBytes(f)), want);
    assert.equal(messageBytes(f).length, 32 + 32 + 20 + 8 + 8 + (tx.length - 2) / 2);
    const dc = messageBytes({ ...f, sequence: DONT_CARE_SEQUENCE });
    assert.equal(Buffer.from(dc.subarray(92, 100)).toString('hex'), 'ffffffffffffffff');
  });

  it('the signature: viem recovers the controller, and signs the same bytes to the same signature (RFC 6979)', async () => {
    const viemKey = privateKeyToAccount(KEY);
    assert.equal(key.address, viemKey.address.toLowerCase());
    for (const [round, sequence, nonce] of [
      [0n, 0n, 0],
      [1n, DONT_CARE_SEQUENCE, 1],
      [99999n, 17n, 2],
    ] as const) {
      const tx = await sign1559({ nonce });
      const f = { chainId: BigInt(DEV_CHAIN_ID), auction: AUCTION, round, sequence, tx: Buffer.from(tx.slice(2), 'hex') };
      const params = JSON.parse(submissionParams(f, tx, key)) as Record<string, string>[];
      assert.equal(params.length, 1);
      const p = params[0]!;
      assert.deepEqual(Object.keys(p), ['chainId', 'round', 'auctionContractAddress', 'transaction', 'options', 'sequenceNumber', 'signature']);
      assert.equal(p.chainId, '0x1237');
      assert.equal(p.round, `0x${round.toString(16)}`);
      assert.equal(p.sequenceNumber, sequence === DONT_CARE_SEQUENCE ? '0xffffffffffffffff' : `0x${sequence.toString(16)}`);
      assert.equal(p.transaction, tx);
      assert.equal(p.options, null);
      const raw = toHex(messageBytes(f));
      const signer = await recoverMessageAddress({ message: { raw }, signature: p.signature as Hex });
      assert.equal(signer.toLowerCase(), key.address);
      assert.equal(p.signature, await viemKey.signMessage({ message: { raw } }));
    }
  });
});

describe("the endpoint's answers (timeboost/errors.go, express_lane_service.go)", () => {
  const err = (message: string, code = -32000) => JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message } });
  /** The endpoint's answer over HTTP, read as the lane reads it. */
  const readLaneAnswer = (text: string) => readLaneUpstream(interpret(200, text));
  it('null is queued, never accepted; a refusal before storing is not-sequenced; anything else unknown', () => {
    assert.deepEqual(readLaneAnswer('{"jsonrpc":"2.0","id":1,"result":null}'), { kind: 'queued' });
    for (const [message, code, lost] of [
      ['express lane tx round 5 does not match current round 6: BAD_ROUND_NUMBER', 'BAD_ROUND_NUMBER', true],
      ['no on-chain controller for round 5 (current round 5, ValidateExpressLaneTx): NO_ONCHAIN_CONTROLLER', 'NO_ONCHAIN_CONTROLLER', true],
      ['NOT_EXPRESS_LANE_CONTROLLER', 'NOT_EXPRESS_LANE_CONTROLLER', true],
      ['SEQUENCE_NUMBER_TOO_LOW', 'SEQUENCE_NUMBER_TOO_LOW', false],
      ['SEQUENCE_NUMBER_ALREADY_SEEN', 'SEQUENCE_NUMBER_ALREADY_SEEN', false],
      ['message sequence number has reached max allowed limit. SequenceNumber: 1002, ExpectedSequenceNumber: 1, Limit: 1001', 'SEQUENCE_NUMBER_LIMIT', false],
      ['express lane tx chain ID 1 does not match current chain ID 2: WRONG_CHAIN_ID', 'WRONG_CHAIN_ID', false],
      ['signature length is not 65: MALFORMED_DATA', 'MALFORMED_DATA', false],
      ['timeboost not enabled', 'LANE_NOT_SERVED', false],
    ] as const)
      assert.deepEqual(readLaneAnswer(err(message)), { kind: 'not-sequenced', code, lostControl: lost }, message);
    assert.deepEqual(readLaneAnswer(err('the method timeboost_sendExpressLaneTransaction does not exist/is not available', -32601)), {
      kind: 'not-sequenced',
      code: 'LANE_NOT_SERVED',
      lostControl: false,
    });
    for (const text of [
      err('context deadline exceeded'),
      err('nonce too low'),
      '{"jsonrpc":"2.0","id":1,"result":"0xabc"}',
      '{"jsonrpc":"2.0","id":1}',
      'garbage',
      '[]',
      err(''),
    ])
      assert.equal(readLaneAnswer(text).kind, 'unknown', text);
  });
});

describe('ordered sequence numbers', () => {
  it('gapless per round; used on null, TOO_LOW, ALREADY_SEEN; handed out again otherwise; the future limit', () => {
    const s = new OrderedSequence(2);
    assert.equal(s.take(1), 0n);
    assert.equal(s.take(1), 1n);
    assert.equal(s.take(1), 2n);
    assert.equal(s.take(1), null, '3 > 0 + 2: the plain path');
    s.release(1, 0n, { kind: 'queued' });
    s.release(1, 1n, { kind: 'unknown', why: 'timeout' });
    assert.equal(s.take(1), 1n, 'the number of unknown fate first');
    s.release(1, 1n, { kind: 'not-sequenced', code: 'SEQUENCE_NUMBER_ALREADY_SEEN', lostControl: false });
    s.release(1, 2n, { kind: 'not-sequenced', code: 'SEQUENCE_NUMBER_LIMIT', lostControl: false });
    assert.equal(s.take(1), 2n);
    assert.equal(s.take(1), 3n);
    assert.equal(s.take(2), 0n, 'a new round from 0');
    s.release(1, 3n, { kind: 'queued' });
    assert.equal(s.outstanding, 1);
  });
});

describe("the controller key's custody", () => {
  it('never printed; a file others may read refused; one line naming the source', () => {
    const hex = KEY.slice(2);
    for (const shown of [inspect(key), JSON.stringify({ key }), String(key)]) assert.equal(shown.includes(hex), false, shown);
    const dir = tempDir('el-key-');
    const file = join(dir, 'k');
    writeFileSync(file, `${KEY}\n`);
    chmodSync(file, 0o640);
    assert.throws(() => loadControllerKey({ file }), /may be read by others \(mode 0640\)/);
    chmodSync(file, 0o600);
    assert.equal(loadControllerKey({ file }).address, key.address);
    assert.equal(loadControllerKey({ env: 'K' }, { K: hex }).address, key.address);
    for (const bad of ['', 'zz', '0x00', `0x${'0'.repeat(64)}`, `0x${'f'.repeat(64)}`]) {
      const e = (() => {
        try {
          loadControllerKey({ env: 'K' }, { K: bad });
        } catch (x) {
          return x as Error;
        }
        return assert.fail('accepted');
      })();
      assert.match(e.message, /^environment variable K /);
      assert.equal(e.message.includes('\n'), false);
    }
  });
});

describe('configuration and grants', () => {
  const chain = (expressLane: unknown, extra: Record<string, unknown> = {}) => ({
    chains: [{ chainId: 1, hosts: ['a.example'], sequencers: ['http://127.0.0.1:1'], expressLane, ...extra }],
  });
  it('off by default; enabled needs the auction, the endpoint, one key source, the chain RPC', () => {
    assert.equal(parseConfig(chain(undefined), '/').chains[0]!.expressLane.enabled, false);
    assert.throws(
      () => parseConfig(chain({ enabled: true }), '/'),
      (e: Error) => {
        for (const want of [
          'expressLane.auction: required',
          'expressLane.endpoint: required',
          'chains[0].rpc: required by expressLane',
          'exactly one of keyFile and keyEnv',
        ])
          assert.ok(e.message.includes(want), want);
        return true;
      },
    );
    const dir = tempDir('el-cfg-');
    writeFileSync(join(dir, 'k'), KEY);
    chmodSync(join(dir, 'k'), 0o644);
    const on = { enabled: true, auction: AUCTION, endpoint: 'http://127.0.0.1:2', keyFile: 'k' };
    assert.throws(
      () => parseConfig(chain(on, { rpc: 'http://127.0.0.1:3' }), dir),
      /chains\[0\]\.expressLane\.keyFile: \S+ may be read by others \(mode 0644\)/,
    );
    chmodSync(join(dir, 'k'), 0o600);
    const c = parseConfig(chain(on, { rpc: 'http://127.0.0.1:3' }), dir).chains[0]!.expressLane;
    assert.equal(c.keyFile, join(dir, 'k'));
    assert.equal(c.sequence, 'dont-care');
    assert.throws(
      () => parseConfig(chain({ ...on, auction: '0x12', sequence: 'any' }, { rpc: 'http://127.0.0.1:3' }), dir),
      /auction: must be a 0x address[\s\S]*sequence/,
    );
  });

  it('the grant field expressLane: a boolean, false when absent', () => {
    const doc = (g: Record<string, unknown>) => ({
      accounts: [
        { id: 'a', keySha256: ['a'.repeat(64)], grants: [{ chainId: 1, rateLimit: { perSecond: 1, burst: 1 }, tipAddresses: [], minTipWei: '0', ...g }] },
      ],
    });
    const grant = (g: Record<string, unknown>) => parseAccounts(doc(g)).accounts[0]!.grants.get(1)!;
    assert.equal(grant({}).expressLane, false);
    assert.equal(grant({ expressLane: true }).expressLane, true);
    assert.throws(
      () => parseAccounts(doc({ expressLane: 'yes' })),
      (e: Error & { problems?: string[] }) => (e.problems ?? [e.message]).some((p) => p.includes('expressLane: must be true or false')),
    );
  });
});

describe("the lane's part in a forward, its hooks failing (direct)", () => {
  // A throwing forward metric must not change what the endpoint's answer meant: a refusal proving
  // the bytes were not sequenced goes to the plain path, a queued one confirmed by lookup is 200.
  const HASH = '0x' + 'ab'.repeat(32);
  const upstream = (a: Answer): Upstream => ({ url: 'http://x', label: 'http://x', labelJson: '"http://x"', call: async () => a, close: async () => {} });
  const lane = (endpoint: Answer) => {
    const log = pino({ level: 'silent' });
    const observer = {
      forward() {
        throw new Error('observer failed');
      },
    };
    const attempts = new Attempts(1, { timeoutMs: 100, queueMs: 10 }, null, log);
    return new ExpressSend(1, { lanes: ExpressLanes.none }, upstream(endpoint), attempts, { timeoutMs: 100, queueMs: 10 }, log, observer);
  };
  const sub: LaneSubmission = { method: SEND_METHOD, paramsJson: '[]', round: 1, seq: 0n, release: () => {} };
  const req = { hash: HASH, rawHex: '0x02', account: 'a', reqId: 'r', sender: null };
  it('queued, then the lookup finds the hash: 200 express', async () => {
    const exit = await lane({ kind: 'result', result: null }).send(
      req,
      sub,
      upstream({ kind: 'result', result: { hash: HASH } }),
      async () => REJECT.upstream_unavailable,
    );
    assert.equal(exit.reason, 'ok');
  });
  it('refused before storing (NOT_EXPRESS_LANE_CONTROLLER): the plain path answers', async () => {
    const refused: Answer = { kind: 'error', code: -32000, message: 'NOT_EXPRESS_LANE_CONTROLLER', data: undefined };
    const exit = await lane(refused).send(req, sub, upstream({ kind: 'result', result: null }), async () => result(HASH));
    assert.equal(exit.reason, 'ok');
  });
});
