/** The host stage: the Host header picks the chain; any other host is 421 before the body is read. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REJECT } from '../../../src/base/errors.js';
import { createHostStage } from '../../../src/stages/host.js';
import { hostName } from '../../../src/config/chains.js';
import { given, passed } from '../../support/stage-context.js';
import { hosts } from '../../support/stage-fixtures.js';

describe('host stage', () => {
  const stage = createHostStage(hosts);
  const at = (host: string) => given({}, { head: { host } }).run(stage);
  it('strips the port, ignores case and a trailing dot', () => {
    assert.equal(hostName('Fast.Chain-A.Example:8443'), 'fast.chain-a.example');
    assert.equal(hostName('fast.chain-a.example.'), 'fast.chain-a.example');
    assert.equal(hostName('[::1]:80'), '[::1]');
    assert.equal(passed(at('FAST.chain-a.example:80')).chain.chainId, 4663);
    assert.equal(passed(at('b.example')).chain.chainId, 10);
  });
  it('421 otherwise', () => {
    for (const h of ['', 'evil.example', 'fast.chain-a.example.evil', 'localhost.evil:80']) assert.equal(at(h), REJECT.misdirected_host);
  });
});
