/**
 * The tracker's one copy of each repeated string (src/track/intern.ts): the same value back for
 * every copy of a string, and the table of them bounded however many distinct values a peer
 * sends (a chain RPC naming ever new senders), starting over past its bound.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Interned } from '../../src/track/intern.js';

describe('Interned', () => {
  it('answers every copy of a string with an equal string, held once', () => {
    const i = new Interned(8);
    const first = i.of(['https://', 'sequencer.example'].join(''));
    for (let k = 0; k < 5; k++) assert.equal(i.of(`https://sequencer.${'example'}`), first);
    assert.equal(i.size, 1);
  });

  it('never holds more than its bound, and still answers past it', () => {
    const i = new Interned(16);
    for (let k = 0; k < 1000; k++) {
      const s = `0x${k.toString(16).padStart(40, '0')}`;
      assert.equal(i.of(s), s);
      assert.ok(i.size <= 16, `${i.size} held after ${k + 1} distinct values`);
    }
    assert.equal(i.of('desk'), 'desk');
  });
});
