/** The decode stage: the signed bytes decoded under the grant's envelopes and the host's chain, or refused with the reason why. */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { keccak256 } from 'viem';
import { initCrypto } from '../../../src/base/native.js';
import type { RawTxParam } from '../../../src/stages/route.js';
import { createDecodeStage } from '../../../src/stages/decode.js';
import { TxDecoder } from '../../../src/tx/decoder.js';
import { given, passed, reason } from '../../support/stage-context.js';
import { chainA, config, grantOf } from '../../support/stage-fixtures.js';
import { base58, solanaTransfer } from '../../support/solana.js';
import { sign1559, signLegacy } from '../../support/txs.js';

describe('decode stage', () => {
  before(() => initCrypto());
  const decoders = new Map(config.chains.map((c) => [c.chainId, new TxDecoder(c.chainId, c.hardfork, { signature: config.crypto.signature })]));
  const stage = createDecodeStage(decoders);
  const run = (rawTx: RawTxParam) => given({ rawTx, chain: chainA, grant: grantOf('a') }).run(stage);
  it('a signed EIP-1559 transaction of the host chain passes, its hash computed here', async () => {
    const raw = await sign1559({ nonce: 7 });
    const tx = passed(run(raw)).tx;
    assert.equal(tx.hash, keccak256(raw));
    assert.equal(tx.nonce, 7n);
    assert.equal(tx.type, 2);
  });
  it('refuses each kind of bad input with its own reason', async () => {
    assert.equal(reason(run(await sign1559({ chainId: 10 }))), 'chain_mismatch');
    assert.equal(reason(run(await signLegacy())), 'unsupported_tx_type', 'the grant lists only 0x02');
    assert.equal(reason(run(await signLegacy({ protected: false }))), 'replay_unprotected');
    assert.equal(reason(run({ to: '0x00', value: '0x1' })), 'unsigned_transaction');
    assert.equal(reason(run(base58(solanaTransfer(false)))), 'solana_transaction');
    assert.equal(reason(run(solanaTransfer(true).toString('base64'))), 'solana_transaction');
    assert.equal(reason(run('A'.repeat(88))), 'invalid_params', 'a string that is neither hex nor a Solana transaction');
    assert.equal(reason(run('0x02c0')), 'invalid_transaction');
  });
});
