/**
 * The README's claim about viem, checked against a real viem send through txgate (a real anvil
 * behind it): `walletClient.sendTransaction` of a refused transaction throws viem's
 * `TransactionExecutionError`, its cause txgate's `TxgateRejectedError`, reached as the README
 * shows (`err.walk((e) => e instanceof TxgateRejectedError)`, `txgateReason(err)`), with the
 * short message the README quotes. docs/clients.md says the same.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type BaseError, createWalletClient, TransactionExecutionError } from 'viem';
import { TxgateRejectedError, txgate, txgateReason } from '../../packages/client/src/viem.js';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { newKey } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { SIGNERS } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const root = join(import.meta.dirname, '..', '..', '..');
const README = readFileSync(join(root, 'README.md'), 'utf8').replace(/\s+/g, ' ');
const CLIENTS = readFileSync(join(root, 'docs', 'clients.md'), 'utf8').replace(/\s+/g, ' ');
const WALK = 'err.walk((e) => e instanceof TxgateRejectedError)';

const key = newKey();
let anvil: Anvil;
const gate = useGate(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
  return { chainB: false, sequencers: [anvil.url], accounts: [{ id: 'desk', keys: [key] }] };
});
after(async () => {
  await anvil.stop();
});

describe("the README's viem error", () => {
  it('names TransactionExecutionError with the txgate error as its cause, and how to reach it; docs/clients.md agrees', () => {
    assert.ok(README.includes("throws viem's `TransactionExecutionError`"), 'the README names the error viem throws');
    assert.ok(README.includes(`\`${WALK}\``) && README.includes('`txgateReason(err)`'), 'the README shows how to reach the cause');
    assert.ok(CLIENTS.includes('`TransactionExecutionError`') && CLIENTS.includes('TxgateRejectedError'), 'docs/clients.md says it');
  });

  it('a real viem send refused by txgate (402 fee_rejected) throws exactly that', async () => {
    const transport = txgate({ url: `http://127.0.0.1:${gate.port}`, apiKey: key, rpc: anvil.url });
    const wallet = createWalletClient({ account: SIGNERS[5]!, transport });
    try {
      // No tip: refused 402 fee_rejected, final for these bytes.
      const err = await wallet.sendTransaction({ chain: null, to: '0x3333333333333333333333333333333333333333', value: 1n }).catch((x: unknown) => x);
      assert.ok(err instanceof TransactionExecutionError, `${(err as Error).name}: ${String(err)}`);
      // As the README writes it.
      const e = (err as BaseError).walk((e) => e instanceof TxgateRejectedError) as TxgateRejectedError | null;
      assert.ok(e instanceof TxgateRejectedError, String(err));
      assert.equal(e.reason, 'fee_rejected');
      assert.equal(e.status, 402);
      assert.match(e.shortMessage, /^txgate fee_rejected \(rejected, HTTP 402\): .*; final for these bytes: fix what the reason names before sending again\.$/);
      assert.equal(txgateReason(err), 'fee_rejected');
    } finally {
      await transport.close();
    }
  });
});
