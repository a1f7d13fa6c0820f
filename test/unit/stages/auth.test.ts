/** The auth stage: the account by the SHA-256 of the presented key. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REJECT } from '../../../src/base/errors.js';
import { createAuthStage } from '../../../src/stages/auth.js';
import { given, passed } from '../../support/stage-context.js';
import { store } from '../../support/stage-fixtures.js';

describe('auth stage', () => {
  const auth = createAuthStage(store);
  const withKey = (apiKey: string, s = store) => given({}, { head: { apiKey } }).run(createAuthStage(s));
  it('the account by key hash; 401 for missing, unknown or overlong keys', () => {
    assert.equal(passed(given({}, { head: { apiKey: 'k1' } }).run(auth)).account.id, 'a');
    assert.equal(withKey(''), REJECT.unauthorized);
    assert.equal(withKey('nope'), REJECT.unauthorized);
    assert.equal(withKey('k'.repeat(300)), REJECT.unauthorized);
  });
  it('503 before a first load, and while the snapshot is stale (never a 401 or a pass)', () => {
    assert.equal(withKey('k1', { ...store, ready: false }), REJECT.not_ready);
    assert.equal(withKey('k1', { ...store, stale: true }), REJECT.credentials_stale);
  });
});
