/**
 * The request log's message (src/front/request-log.ts): a submission's outcome for a send, and
 * `request` for a query answered (eth_chainId, a transaction's status): "accepted" is a
 * transaction's alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REJECT, result } from '../../src/base/errors.js';
import { RequestLog } from '../../src/front/request-log.js';
import { createLogger } from '../../src/log/log.js';
import type { BaseCtx } from '../../src/pipeline/context.js';
import { PLAIN_SEND } from '../../src/rpc/send-kind.js';

const HASH = '0x' + 'ab'.repeat(32);

/** The message of the one line logged for a request that ended with `ctx`'s fields set. */
function messageOf(fields: Record<string, unknown>, exit = result(HASH)): string {
  const out: string[] = [];
  const log = new RequestLog(createLogger({ level: 'info', destination: { write: (s: string) => out.push(s) } }));
  const ctx = { reqId: 'r-1', aborted: false, ...fields } as unknown as BaseCtx;
  log.exit(ctx, exit, 'forward', undefined, 120, false, 'POST /');
  assert.equal(out.length, 1);
  return (JSON.parse(out[0]!) as { msg: string }).msg;
}

const rpc = (method: string, params: unknown[]) => ({ id: 1, idJson: '1', method, params, paramsHex: false });

describe('request log', () => {
  it('a plain send answered with its hash: accepted; refused: its outcome', () => {
    assert.equal(messageOf({ rpc: rpc('eth_sendRawTransaction', ['0x02']), send: PLAIN_SEND }), 'accepted');
    assert.equal(messageOf({ rpc: rpc('eth_sendRawTransaction', ['0x02']), send: PLAIN_SEND }, REJECT.fee_rejected), 'refused');
  });

  it('a status query answered is a request, not an acceptance', () => {
    // The route stage gives a status query the plain kind (the grant reads it) and its own field, the hash asked for.
    const ctx = { rpc: rpc('txgate_getTransactionStatus', [HASH]), send: PLAIN_SEND, statusOf: HASH };
    assert.equal(messageOf(ctx, result('0x1')), 'request');
  });
});
