/**
 * Every decode and fee-admission reason produced by a real signed (or malformed) transaction,
 * through the real server over HTTP, and the accepted cases. Signed by viem.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RLP } from '@ethereumjs/rlp';
import { serializeTransaction, toFunctionSelector, type Hex } from 'viem';
import { MIN_TIP, newKey, startGate, TIP, type Gate } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { base58, solanaTransfer } from '../support/solana.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { intBytes, sign1559, sign2930, signLegacy, signRaw1559, tipCall } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const CONTRACT = '0x1111111111111111111111111111111111111111';
const SELECTOR = toFunctionSelector('payTip(address,uint256)');
const OTHER = '0x3333333333333333333333333333333333333333' as Hex;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

let gate: Gate;
let strict: Gate;
let recover: Gate; // crypto.signature = "recover" (the default is "curve")
let stub: StubSequencer;
const k = newKey(); // default grant: 0x02 only, transfer pattern
const kAll = newKey(); // legacy + 0x01 + 0x02
const kCall = newKey(); // call pattern only
const kUntipped = newKey(); // account allows untipped

before(async () => {
  stub = await new StubSequencer().start();
  const accounts = [
    { id: 'plain', keys: [k] },
    { id: 'all', keys: [kAll], grants: [{ txTypes: [0, 1, 2] }] },
    { id: 'caller', keys: [kCall], grants: [{ feePatterns: [{ kind: 'call', to: CONTRACT, selector: SELECTOR, receiverArg: 0, amountArg: 1 }] }] },
    { id: 'untipped', keys: [kUntipped], allowUntipped: true },
  ];
  gate = await startGate({ sequencers: [stub.url], accounts, config: { allowUntipped: true } });
  strict = await startGate({ sequencers: [stub.url], accounts, config: { allowUntipped: false } });
  recover = await startGate({ sequencers: [stub.url], accounts, config: { crypto: { signature: 'recover' } } });
});
after(async () => {
  await gate.stop();
  await strict.stop();
  await recover.stop();
  await stub.stop();
});

const send = (param: unknown, key = k, g = gate) => rpc(g.port, 'eth_sendRawTransaction', [param], { key });
async function expectReason(param: unknown, reason: string, status = 400, key = k, g = gate) {
  const r = await send(param, key, g);
  assert.equal(r.status, status, `${reason}: ${r.text}`);
  assert.equal(r.json.error.data.reason, reason, r.text);
  return r;
}

/** Re-encodes a signed 0x02 tx with some fields replaced (signature left as given). */
function tamper1559(raw: Hex, change: (f: Uint8Array[]) => void): Hex {
  const fields = RLP.decode(Buffer.from(raw.slice(4), 'hex')) as Uint8Array[];
  change(fields);
  return ('0x02' + Buffer.from(RLP.encode(fields)).toString('hex')) as Hex;
}
const big = (n: bigint) => (n === 0n ? new Uint8Array() : Buffer.from(n.toString(16).padStart(Math.ceil(n.toString(16).length / 2) * 2, '0'), 'hex'));

describe('refusals, one per reason', () => {
  it('solana_transaction: base58, base64 and 0x-hex; legacy and v0 messages', async () => {
    for (const versioned of [false, true]) {
      const tx = solanaTransfer(versioned);
      await expectReason(base58(tx), 'solana_transaction');
      await expectReason(tx.toString('base64'), 'solana_transaction');
      await expectReason('0x' + tx.toString('hex'), 'solana_transaction');
    }
  });
  it('unsigned_transaction: an eth_sendTransaction object, and unsigned RLP', async () => {
    await expectReason({ from: TIP, to: TIP, value: '0x1' }, 'unsigned_transaction');
    const unsigned = serializeTransaction({
      type: 'eip1559',
      chainId: DEV_CHAIN_ID,
      nonce: 0,
      to: TIP as Hex,
      value: 1n,
      gas: 21000n,
      maxFeePerGas: 2n,
      maxPriorityFeePerGas: 1n,
    });
    await expectReason(unsigned, 'unsigned_transaction');
  });
  it('replay_unprotected: legacy without EIP-155', async () => {
    await expectReason(await signLegacy({ protected: false }), 'replay_unprotected', 400, kAll);
  });
  it('unsupported_tx_type: legacy and 0x01 not granted; blob always; unknown type bytes', async () => {
    await expectReason(await signLegacy({}), 'unsupported_tx_type');
    await expectReason(await sign2930({}), 'unsupported_tx_type');
    await expectReason('0x03' + 'c0', 'unsupported_tx_type', 400, kAll);
    await expectReason('0x05f86c0180', 'unsupported_tx_type', 400, kAll);
  });
  it('chain_mismatch: signed for another chain', async () => {
    for (const r of [
      await expectReason(await sign1559({ chainId: 1 }), 'chain_mismatch'),
      await expectReason(await signLegacy({ chainId: 1 }), 'chain_mismatch', 400, kAll),
    ]) {
      // Both ids named: the one signed for and the one this host serves.
      assert.match(r.json.error.message, /signed for chain 1 \(0x1\), this host serves chain 4663 \(0x1237\)/);
      assert.deepEqual(r.json.error.data, { reason: 'chain_mismatch', chainId: '0x1237', txChainId: '0x1' });
    }
  });
  for (const mode of ['recover', 'curve'] as const)
    it(`invalid_signature: high s, bad y-parity, r = 0, r ≥ n, r off the curve (crypto.signature ${mode})`, async () => {
      const g = mode === 'recover' ? recover : gate;
      const raw = await sign1559({});
      await expectReason(
        tamper1559(raw, (f) => {
          const s = BigInt('0x' + Buffer.from(f[11]!).toString('hex'));
          f[11] = big(N - s);
          f[9] = f[9]!.length === 0 ? big(1n) : big(0n);
        }),
        'invalid_signature',
        400,
        k,
        g,
      );
      await expectReason(
        tamper1559(raw, (f) => {
          f[9] = big(2n);
        }),
        'invalid_signature',
        400,
        k,
        g,
      );
      await expectReason(
        tamper1559(raw, (f) => {
          f[10] = big(0n);
        }),
        'invalid_signature',
        400,
        k,
        g,
      );
      await expectReason(
        tamper1559(raw, (f) => {
          f[10] = big(N + 1n);
        }),
        'invalid_signature',
        400,
        k,
        g,
      ); // r ≥ n does not recover
      await expectReason(
        tamper1559(raw, (f) => {
          f[10] = big(5n);
        }),
        'invalid_signature',
        400,
        k,
        g,
      ); // 5³ + 7 is not a square mod p
      const ok = await send(await sign1559({ nonce: 90 + (mode === 'curve' ? 1 : 0) }), k, g);
      assert.equal(ok.status, 200, ok.text);
    });
  it('invalid_transaction: malformed RLP, trailing bytes, leading zeros, intrinsic gas, fee order, address length', async () => {
    const raw = await sign1559({});
    const cases: [string, Hex][] = [
      ['truncated', raw.slice(0, -10) as Hex],
      ['trailing bytes', (raw + '00') as Hex],
      [
        'leading zero nonce',
        tamper1559(raw, (f) => {
          f[1] = Buffer.from([0, 1]);
        }),
      ],
      ['gas under intrinsic', await sign1559({ gas: 20_999n })],
      [
        'maxPriorityFeePerGas > maxFeePerGas',
        signRaw1559([
          intBytes(BigInt(DEV_CHAIN_ID)),
          intBytes(0n),
          intBytes(2n),
          intBytes(1n),
          intBytes(21000n),
          Buffer.from(TIP.slice(2), 'hex'),
          intBytes(MIN_TIP),
          new Uint8Array(),
          [],
        ] as never),
      ],
      [
        '19-byte to',
        tamper1559(raw, (f) => {
          f[5] = f[5]!.subarray(1);
        }),
      ],
      ['empty', '0x'],
    ];
    for (const [what, param] of cases) {
      const r = await expectReason(param, 'invalid_transaction');
      assert.match(r.json.error.message, /^Invalid transaction: /, what);
    }
  });
});

describe('fee admission', () => {
  it('402 fee_rejected for a transfer to a non-tip address, a tip under the minimum; the message points at /tip-addresses', async () => {
    for (const t of [{ to: OTHER }, { value: MIN_TIP - 1n }]) {
      const r = await expectReason(await sign1559(t), 'fee_rejected', 402);
      assert.match(r.json.error.message, /GET \/tip-addresses/);
      assert.match(r.json.error.message, new RegExp(`${MIN_TIP}`));
    }
  });
  it('call pattern: accepted when the ABI words pay the tip; refused otherwise', async () => {
    const call = (data: Hex, to: Hex = CONTRACT) => sign1559({ to, value: 0n, data, gas: 100_000n });
    const ok = await send(await call(tipCall(TIP as Hex, MIN_TIP)), kCall);
    assert.equal(ok.status, 200, ok.text);
    const good = tipCall(TIP as Hex, MIN_TIP);
    await expectReason(await call(tipCall(TIP as Hex, MIN_TIP - 1n)), 'fee_rejected', 402, kCall);
    await expectReason(await call(tipCall(OTHER, MIN_TIP)), 'fee_rejected', 402, kCall);
    await expectReason(await call(good, OTHER), 'fee_rejected', 402, kCall);
    await expectReason(await call(('0xdeadbeef' + good.slice(10)) as Hex), 'fee_rejected', 402, kCall);
    await expectReason(await call(good.slice(0, good.length - 2) as Hex), 'fee_rejected', 402, kCall); // calldata too short
    const dirty = (good.slice(0, 10) + 'ff' + good.slice(12)) as Hex; // upper 12 bytes of the receiver word not zero
    await expectReason(await call(dirty), 'fee_rejected', 402, kCall);
  });
  it('untipped plain transfer: accepted only when both the account and the deployment allow it', async () => {
    const plain = await sign1559({ to: OTHER, value: 0n, nonce: 70 });
    assert.equal((await send(plain, kUntipped)).status, 200);
    await expectReason(await sign1559({ to: OTHER, value: 0n, nonce: 71 }), 'fee_rejected', 402, k); // account does not
    await expectReason(await sign1559({ to: OTHER, value: 0n, nonce: 72 }), 'fee_rejected', 402, kUntipped, strict); // deployment does not
    await expectReason(await sign1559({ to: OTHER, value: 0n, data: '0x01', gas: 30_000n, nonce: 73 }), 'fee_rejected', 402, kUntipped); // not plain
  });
});

describe('accepted', () => {
  it('a tipped EIP-1559 transfer: 200 with the locally computed hash', async () => {
    const raw = await sign1559({ nonce: 80 });
    const r = await send(raw);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, result: txHash(raw) });
    assert.equal(stub.sends().at(-1)!.params[0], raw, 'the original signed hex is forwarded');
  });
  it('legacy EIP-155 and 0x01 when the grant lists them', async () => {
    for (const raw of [await signLegacy({ nonce: 81 }), await sign2930({ nonce: 82 })]) {
      const r = await send(raw, kAll);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.result, txHash(raw));
    }
  });
  it('a 0X-prefixed param is forwarded with a canonical 0x prefix', async () => {
    const raw = await sign1559({ nonce: 83 });
    const r = await send('0X' + raw.slice(2));
    assert.equal(r.status, 200);
    assert.equal(stub.sends().at(-1)!.params[0], raw);
  });
});
