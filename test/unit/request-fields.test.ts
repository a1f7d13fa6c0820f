/**
 * The request line's repeated fields as pieces (src/front/request-fields.ts): each gives, after an
 * open string or a closed field, character for character what the field written by itself gave.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountField, chainAccountFields, chainField, methodField, methodStatusUsKey, statusField } from '../../src/front/request-fields.js';
import { writtenLine } from '../support/log-line-text.js';
import type { LogLine, Piece } from '../../src/log/log-line.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const written = (build: (l: LogLine) => void): string => writtenLine('{"level":"info"', 'request', build);

/**
 * Each case's line written field by field and with its pieces gives the same text, valid JSON,
 * after an open string field and after a closed one, twice (the second from the cache).
 */
function sameText(cases: readonly (readonly [(l: LogLine) => void, (l: LogLine) => void])[]): void {
  for (const [byField, byPiece] of cases)
    for (const open of [true, false])
      for (let k = 0; k < 2; k++) {
        const before = (l: LogLine) => (open ? l.str('reqId', 'r-1') : l.json('us', 12));
        const want = written((l) => {
          before(l);
          byField(l);
        });
        const got = written((l) => {
          before(l);
          byPiece(l);
        });
        assert.equal(got, want);
        assert.ok(JSON.parse(got));
      }
}

describe('request line pieces', () => {
  it('the same text as field by field, after an open or a closed field, from the cache too', () => {
    const account = { id: 'acct-1' };
    const cases: [(l: LogLine) => void, () => Piece][] = [
      [(l) => l.json('status', 402), () => statusField(402)],
      [(l) => l.json('chainId', DEV_CHAIN_ID), () => chainField(DEV_CHAIN_ID)],
      [(l) => l.str('method', 'eth_sendRawTransaction'), () => methodField('eth_sendRawTransaction')],
      [(l) => l.str('account', 'acct-1'), () => accountField(account)],
      [(l) => l.json('chainId', DEV_CHAIN_ID).str('account', 'acct-1'), () => chainAccountFields(DEV_CHAIN_ID, account)],
      [(l) => l.json('chainId', 10).str('account', 'acct-1'), () => chainAccountFields(10, account)],
    ];
    // Each piece followed by a string field, as the request line writes them.
    sameText(
      cases.map(
        ([byField, asPiece]) =>
          [
            (l: LogLine) => {
              byField(l);
              l.str('tx', '0xab');
            },
            (l: LogLine) => l.fields(asPiece()).str('tx', '0xab'),
          ] as const,
      ),
    );
  });

  it('the pieces ending in a key, their value after them, are the fields written one by one, after an open or a closed field, from the cache too', () => {
    const account = { id: 'acct-1' };
    const cases: [(l: LogLine) => void, (l: LogLine) => void][] = [
      [
        (l) => l.str('method', 'eth_sendRawTransaction').json('status', 200).json('us', 1464),
        (l) => l.jsonAfter(methodStatusUsKey('eth_sendRawTransaction', 200), 1464),
      ],
      [(l) => l.str('method', 'eth_chainId').json('status', 413).json('us', 7), (l) => l.jsonAfter(methodStatusUsKey('eth_chainId', 413), 7)],
      [
        (l) => l.json('chainId', DEV_CHAIN_ID).str('account', 'acct-1').str('tx', '0xab'),
        (l) => l.strAfter(chainAccountFields(DEV_CHAIN_ID, account, true), '0xab'),
      ],
    ];
    sameText(cases);
  });
});
