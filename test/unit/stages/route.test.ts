/** The route stage: eth_chainId answered from configuration, the send's one param passed on, the rest refused. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Exit } from '../../../src/base/errors.js';
import { createRouteStage } from '../../../src/stages/route.js';
import { given, passed, reason } from '../../support/stage-context.js';
import { buildChains } from '../../../src/config/chains.js';
import { parseConfig } from '../../../src/config/config.js';
import { chainA, rpc } from '../../support/stage-fixtures.js';
import { DEV_CHAIN_ID } from '../../../src/dev/dev-setup.js';

/** Chain 4663 with the sync method on. */
const syncChain = buildChains(
  parseConfig(
    { chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'], rpc: 'http://127.0.0.1:9', sync: { enabled: true } }] },
    '/',
    {},
  ),
)[0]!;

/** Chain 4663 tracking its accepted transactions. */
const trackedChain = buildChains(
  parseConfig(
    { chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'], rpc: 'http://127.0.0.1:9', track: { enabled: true } }] },
    '/',
    {},
  ),
)[0]!;

describe('route stage', () => {
  const stage = createRouteStage({ chainIdMaxBodyBytes: 512 });
  const r = (method: string, params: unknown[], bytes = 60) => given({ chain: chainA, body: { text: '', bytes }, rpc: rpc(method, params) }).run(stage);
  it('answers eth_chainId from configuration', () => {
    const out = r('eth_chainId', []);
    assert.ok(out instanceof Exit);
    assert.equal(out.body('1'), '{"jsonrpc":"2.0","id":1,"result":"0x1237"}');
    assert.equal(reason(r('eth_chainId', [], 513)), 'payload_too_large');
    assert.equal(reason(r('eth_chainId', ['latest'])), 'invalid_params');
  });
  it('passes a hex param, an object (unsigned) and a base58/64 string (Solana?) on to decode', () => {
    assert.equal(passed(r('eth_sendRawTransaction', ['0x02ab'])).rawTx, '0x02ab');
    assert.deepEqual(passed(r('eth_sendRawTransaction', [{ to: '0x' }])).rawTx, { to: '0x' });
    assert.equal(typeof passed(r('eth_sendRawTransaction', ['A'.repeat(88)])).rawTx, 'string');
  });
  it('says what kind of send it is: plain, or sync with the wait asked for (capped by sync.maxWaitMs)', () => {
    const s = (params: unknown[]) => given({ chain: syncChain, body: { text: '', bytes: 60 }, rpc: rpc('eth_sendRawTransactionSync', params) }).run(stage);
    assert.deepEqual(passed(r('eth_sendRawTransaction', ['0x02ab'])).send, { kind: 'plain' });
    assert.deepEqual(passed(s(['0x02ab', 1500])).send, { kind: 'sync', waitMs: 1500 });
    assert.deepEqual(passed(s(['0x02ab', '0x10'])).send, { kind: 'sync', waitMs: 16 });
    const max = syncChain.config.sync.maxWaitMs;
    assert.deepEqual(passed(s(['0x02ab'])).send, { kind: 'sync', waitMs: max });
    assert.deepEqual(passed(s(['0x02ab', max + 1])).send, { kind: 'sync', waitMs: max });
    assert.equal(reason(s(['0x02ab', 0])), 'invalid_params');
    // Where the chain does not serve it, the sync method is a method not served.
    assert.equal(reason(r('eth_sendRawTransactionSync', ['0x02ab'])), 'method_not_found');
  });
  it('refuses other params and other methods', () => {
    for (const params of [[], ['0x1'], ['0x', '0x'], [1], ['hello world']]) assert.equal(reason(r('eth_sendRawTransaction', params)), 'invalid_params');
    assert.equal(reason(r('eth_sendTransaction', [])), 'method_not_found');
  });
  it('a status query: one transaction hash, lower-cased, passed on as such where the chain tracks; a method not served elsewhere', () => {
    const q = (chain: typeof chainA, params: unknown[]) =>
      given({ chain, body: { text: '', bytes: 60 }, rpc: rpc('txgate_getTransactionStatus', params) }).run(stage);
    const hash = '0x' + 'AB'.repeat(32);
    const out = passed(q(trackedChain, [hash]));
    assert.deepEqual([out.send, out.rawTx, out.statusOf], [{ kind: 'plain' }, undefined, hash.toLowerCase()]);
    for (const bad of [[], [hash, 1], ['0x12'], [42], [hash.slice(0, 65) + 'z']])
      assert.equal(reason(q(trackedChain, bad)), 'invalid_params', JSON.stringify(bad));
    assert.equal(reason(q(chainA, [hash])), 'method_not_found');
  });
});
