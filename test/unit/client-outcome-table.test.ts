/** The client's outcome table against the server's reasons table, and what the adapters report. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kindOf, OUTCOMES, rpcError, type OutcomeRow } from '../../packages/client/src/outcomes.js';
import { classify } from '../../packages/client/src/submission.js';
import { REASON_NAMES, REASONS, RETRY } from '../../src/base/reasons.js';
import { kitKindOf } from '../../scripts/readme-retry.js';

const CLIENTS = readFileSync(join(import.meta.dirname, '../../../docs/clients.md'), 'utf8');
const rows = OUTCOMES as Record<string, OutcomeRow>;

/** What a status means when nothing else is known: the spec's table. */
function expectedKind(status: number): string {
  if (status === 429) return 'rate_limited';
  if (status === 202) return 'pending';
  if (status === 503) return 'not_forwarded';
  if (status >= 499 && status !== 503) return 'uncertain';
  return 'rejected';
}

describe('client outcome table', () => {
  it("classifies every reason of the server as its status says, and lists each it names with the server's status and code", () => {
    // A reason the client's table does not name yet (a server newer than the client) falls
    // back to its status, which gives the same kind: the client is never wrong about it.
    // The one exception: client_closed (499), which a client never gets from txgate (it had
    // gone); unknown, a 499 is uncertain, the safe side of the not_sent it is.
    for (const r of REASON_NAMES)
      if (r !== 'client_closed') assert.equal(kindOf('a_reason_not_known_yet', REASONS[r].status), expectedKind(REASONS[r].status), r);
    assert.equal(kindOf('a_reason_not_known_yet', 499), 'uncertain');
    for (const r of REASON_NAMES) {
      const row = rows[r];
      if (row === undefined) continue;
      assert.equal(row.status, REASONS[r].status, r);
      assert.equal(row.code, REASONS[r].code, r);
      // The kind is the server's outcome (its one retry rule), as the kit reports it.
      assert.equal(row.kind, kitKindOf(RETRY[REASONS[r].retry].outcome, row.status), r);
      assert.equal(kindOf(r, row.status), row.kind, r);
    }
  });
  it("the client's own reasons are no server reason, and each is in docs/clients.md", () => {
    const own = Object.keys(OUTCOMES).filter((r) => rows[r]!.client === true);
    assert.deepEqual(own.sort(), ['uncertain', 'unexpected_answer', 'unreachable']);
    for (const r of own) {
      assert.ok(!(REASON_NAMES as readonly string[]).includes(r), r);
      assert.match(CLIENTS, new RegExp(`\\| \`${r}\` \\|`), `docs/clients.md's client reasons table lists ${r}`);
    }
  });
  it('classifies by data.reason, by the status only where there is none', () => {
    const err = (status: number, reason?: string) =>
      ({ kind: 'error', code: -32000, message: 'm', data: reason === undefined ? undefined : { reason }, status, headers: {} }) as const;
    assert.equal(classify(err(503, 'overloaded'), '0xh').kind, 'not_forwarded');
    assert.equal(classify(err(502, 'upstream_error'), '0xh').kind, 'uncertain');
    assert.equal(classify(err(402, 'fee_rejected'), '0xh').kind, 'rejected');
    const bare = classify(err(400), '0xh');
    assert.equal(bare.kind, 'rejected');
    assert.equal(bare.kind === 'rejected' && bare.reason, 'unexpected_answer', 'no invented http_400');
    assert.equal(classify(err(504), '0xh').kind, 'uncertain');
    assert.equal(classify({ kind: 'failed', sent: false, why: 'refused', status: 0 } as never, '0xh').kind, 'not_forwarded');
  });
  it('the adapters report each refusal with the code and status of the table', () => {
    assert.deepEqual(rpcError({ kind: 'not_forwarded', reason: 'overloaded' }).code, -32005);
    assert.deepEqual(rpcError({ kind: 'not_forwarded', reason: 'unreachable' }).status, 503);
    const u = rpcError({ kind: 'uncertain', hash: '0xh', why: 'timeout' });
    assert.deepEqual([u.code, u.status, u.data], [-32603, 502, { reason: 'uncertain', txHash: '0xh' }]);
    assert.equal(rpcError({ kind: 'rate_limited', retryAfterMs: 250 }).data.retryAfterMs, 250);
  });
});
