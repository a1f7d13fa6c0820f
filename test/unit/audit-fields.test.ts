/**
 * The audit line's repeated fields as pieces (src/forward/audit-fields.ts): a line built with
 * them is, character for character, the line built field by field as before, whichever of the
 * optional fields (the lane, the method, the rule) it has, after an open string or a closed field.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountTxKey, auditHead, auditHeadReqId, partFields, sequencerFields, sequencerPartMsKey } from '../../src/log/audit-fields.js';
import type { Sequencer } from '../../src/forward/sequencer.js';
import { writtenLine } from '../support/log-line-text.js';
import type { LogLine } from '../../src/log/log-line.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const written = (build: (l: LogLine) => void): string => writtenLine('{"level":"info","time":1,"pid":2', 'forward', build);

describe('audit line pieces', () => {
  it('the same text as field by field, for every lane, method, rule and role', () => {
    const seq = { labelJson: JSON.stringify('https://seq.example/"x"') } as unknown as Sequencer;
    for (const laneNamed of [false, true])
      for (const method of [undefined, 'eth_sendRawTransactionSync'])
        for (const rule of [null, 'hash', 'lookup'])
          for (const role of ['final', 'loser'])
            for (const before of ['open', 'closed']) {
              const fieldByField = written((l) => {
                if (before === 'open') l.str('x', 'y');
                else l.json('x', 1);
                l.str('audit', 'forward');
                if (laneNamed) l.str('lane', 'plain');
                if (method !== undefined) l.str('method', method);
                l.str('reqId', 'r-1').str('account', 'acct').str('tx', '0xab').json('chainId', DEV_CHAIN_ID);
                l.json('sequencer', seq.labelJson).str('outcome', 'accepted').str('answer', 'accepted');
                if (rule !== null) l.str('rule', rule);
                l.str('role', role).json('ms', '1.5');
              });
              // Twice: the second time from the caches.
              for (let k = 0; k < 2; k++) {
                const pieces = written((l) => {
                  if (before === 'open') l.str('x', 'y');
                  else l.json('x', 1);
                  l.fields(auditHead(laneNamed, method)).str('reqId', 'r-1').str('account', 'acct').str('tx', '0xab');
                  l.fields(sequencerFields(DEV_CHAIN_ID, seq))
                    .fields(partFields('accepted', 'accepted', rule, role))
                    .json('ms', '1.5');
                });
                assert.equal(pieces, fieldByField);
                assert.ok(JSON.parse(pieces));
                // The sequencer's and the part's fields as one piece, as the audit line writes them.
                const joined = written((l) => {
                  if (before === 'open') l.str('x', 'y');
                  else l.json('x', 1);
                  l.strAfter(auditHeadReqId(laneNamed, method), 'r-1').strAfter(accountTxKey('acct'), '0xab');
                  l.jsonAfter(sequencerPartMsKey(DEV_CHAIN_ID, seq, 'accepted', 'accepted', rule, role), '1.5');
                });
                assert.equal(joined, fieldByField);
              }
            }
  });
});
