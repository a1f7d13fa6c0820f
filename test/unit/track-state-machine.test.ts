/**
 * The tracked states, as a state machine (src/track/states.ts, src/track/table.ts): a property
 * test over random moves (none out of a final state but a reorg's return to pending, every change
 * told once, in version order, and the status told equal to what a status call then answers),
 * the table's bound (the oldest final entry goes first; a table full of pending refuses), and the
 * docs/tracking.md tables against the code both ways: rendered from it, and read back into it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { block } from '../../scripts/readme-tables.js';
import { Writable } from 'node:stream';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import { Tracker } from '../../src/track/tracker.js';
import { ChainRpc } from '../../src/upstreams/chain-rpc/chain-rpc.js';
import { isFinal, mayMove, STATES, statesTable, TRANSITIONS, transitionsTable, type TrackState } from '../../src/track/states.js';
import { entryStatus } from '../../src/track/status.js';
import { Entry, TrackTable } from '../../src/track/table.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const root = join(import.meta.dirname, '..', '..', '..');
const ALL: TrackState[] = ['pending', 'included', 'reverted', 'replaced', 'dropped'];
const hashOf = (i: number) => '0x' + i.toString(16).padStart(64, '0');
const entry = (i: number, account = 'desk') =>
  new Entry({
    hash: hashOf(i),
    account,
    nonce: i,
    receivedAt: 1000 + i,
    acceptedAt: 1001 + i,
    sequencer: 'http://seq',
    rule: 'hash',
    sender: null,
    raw: '0x02',
  });

describe('tracked states: the state machine', () => {
  it('random moves: only listed transitions happen; a final state is left only for pending (a reorg); every change is told once, in order, equal to the status then', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom(...ALL)), { maxLength: 60 }), (moves) => {
        const told: { hash: string; status: string; version: number }[] = [];
        const table = new TrackTable(100, 60_000, (e) => told.push({ hash: e.hash, status: entryStatus(e, 1), version: e.version }));
        const entries = [0, 1, 2, 3].map((i) => entry(i));
        for (const e of entries) assert.equal(table.add(e), true);
        for (const [i, to] of moves) {
          const e = entries[i]!;
          const from = e.state;
          const allowed = mayMove(from, to);
          if (allowed) table.move(e, to, 5000);
          else assert.throws(() => table.move(e, to, 5000), /no transition/);
          assert.equal(e.state, allowed ? to : from);
          if (allowed && isFinal(from)) assert.equal(to, 'pending', 'a final state is left only by a reorg');
        }
        for (const e of entries) {
          const mine = told.filter((t) => t.hash === e.hash);
          assert.deepEqual(
            mine.map((t) => t.version),
            mine.map((_, k) => k + 1),
            'one change per version, in order',
          );
          assert.equal(mine.at(-1)!.status, entryStatus(e, 1), 'the last change told is what a status call answers now');
          assert.equal(JSON.parse(mine.at(-1)!.status).status, e.state);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('the bound: the oldest final entry goes first (counted); a table full of pending ones refuses to track (counted), never throws', () => {
    const table = new TrackTable(3, 60_000, () => {});
    const [a, b, c, d, e] = [0, 1, 2, 3, 4].map((i) => entry(i));
    for (const x of [a!, b!, c!]) table.add(x);
    assert.equal(table.add(d!), false);
    assert.deepEqual(table.counts, { evicted: 0, refused: 1 });
    table.move(b!, 'dropped', 10);
    table.move(a!, 'included', 20);
    assert.equal(table.add(d!), true);
    assert.equal(table.get(b!.hash), undefined, 'the oldest final (b, final first) went');
    assert.equal(table.add(e!), true);
    assert.equal(table.get(a!.hash), undefined);
    assert.deepEqual(table.counts, { evicted: 2, refused: 1 });
    assert.equal(table.pending, 3);
    // keepMs: final entries leave once past it.
    const kept = new TrackTable(10, 1000, () => {});
    const f = entry(9);
    kept.add(f);
    kept.move(f, 'dropped', 100);
    kept.sweep(1099);
    assert.equal(kept.size, 1);
    kept.sweep(1100);
    assert.equal(kept.size, 0);
  });

  it('an acceptance the tracker fails to take never throws into the forward that told it', async () => {
    const chain = parseConfig(
      {
        chains: [
          { chainId: DEV_CHAIN_ID, hosts: ['x'], sequencers: ['http://127.0.0.1:9'], rpc: 'http://127.0.0.1:9', track: { enabled: true, pollMs: 60_000 } },
        ],
      },
      root,
      {},
    ).chains[0]!;
    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }) });
    const rpc = new ChainRpc(chain.rpc!);
    const tracker = new Tracker(chain, log, { rpc });
    tracker.listen(() => {
      throw new Error('a listener that breaks');
    });
    const req = { hash: hashOf(77), rawHex: '0x02', account: 'desk', reqId: 'r', sender: null, t0: performance.now() };
    assert.doesNotThrow(() => tracker.accepted(req, 'http://seq', 'hash'));
    await tracker.close();
    await rpc.close();
    assert.ok(lines.some((l) => l.includes('could not be tracked')));
  });

  it('the configuration: off by default; on, it needs the chain RPC', () => {
    const chain = { chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:8547'] };
    assert.equal(parseConfig({ chains: [chain] }, root, {}).chains[0]!.track.enabled, false);
    assert.throws(() => parseConfig({ chains: [{ ...chain, track: { enabled: true } }] }, root, {}), /chains\[0\]\.rpc: required by track\.enabled/);
    assert.equal(parseConfig({ chains: [{ ...chain, rpc: 'http://127.0.0.1:8545', track: { enabled: true } }] }, root, {}).chains[0]!.track.enabled, true);
  });

  it('docs/tracking.md: the tables are the ones rendered from the code, and read back they are the code', () => {
    const page = readFileSync(join(root, 'docs', 'tracking.md'), 'utf8');
    assert.equal(block(page, 'track-states'), statesTable());
    assert.equal(block(page, 'track-transitions'), transitionsTable());
    const rows = (name: string) =>
      block(page, name)
        .split('\n')
        .slice(2)
        .map((r) => r.split('|').map((c) => c.trim()));
    const moves = rows('track-transitions').map(([, from, to]) => [from === '(accepted)' ? null : from!.replaceAll('`', ''), to!.replaceAll('`', '')]);
    assert.deepEqual(
      moves,
      TRANSITIONS.map((t) => [t.from, t.to]),
    );
    const states = rows('track-states').map(([, s, final]) => [s!.replaceAll('`', ''), final === 'yes']);
    assert.deepEqual(
      states,
      Object.entries(STATES).map(([s, v]) => [s, v.final]),
    );
  });
});
