/**
 * The seam of the one tracker per process (src/track/seam/, docs/tracking.md#one-tracker-per-process),
 * both ends on this thread: a status question another worker asks ends by its signal (at once
 * when it has ended, when it ends while the owner is silent, with the owner's answer otherwise);
 * and the trackers the owner makes, given it as their hand-off at construction, take what other
 * threads handed over at each of their needs: a watcher pass (its hook given to the watcher at
 * construction), a status lookup, a listener; once the owner is closed, they read nothing more.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import { TrackOwner } from '../../src/track/seam/owner.js';
import { seamParts } from '../../src/track/seam/protocol.js';
import { OWNER_MS, TrackRemote } from '../../src/track/seam/remote.js';
import { type HandOff, Tracker } from '../../src/track/tracker.js';
import type { HeadSource } from '../../src/upstreams/chain-rpc/chain-heads.js';
import { ChainRpc } from '../../src/upstreams/chain-rpc/chain-rpc.js';
import { eventually } from '../support/harness.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const RPC = 'http://127.0.0.1:9';
const chain = parseConfig({ chains: [{ chainId: DEV_CHAIN_ID, hosts: ['x'], sequencers: [RPC], rpc: RPC, track: { enabled: true, pollMs: 60_000 } }] }, '.', {})
  .chains[0]!;
const rpc = new ChainRpc(RPC);
const log = createLogger({ level: 'silent' });
after(() => rpc.close());
const hashOf = (i: number) => `0x${i.toString(16).padStart(64, '0')}`;
const request = (i: number) => ({ hash: hashOf(i), rawHex: `0x02${'ab'.repeat(100)}`, account: 'desk', reqId: 'r', sender: null, t0: performance.now() });
const tick = () => new Promise((r) => setTimeout(r, 20));

/** Two threads' parts of the seam, both here. */
function parts() {
  const [own, other] = seamParts(2, () => new MessageChannel());
  assert.ok(own?.role === 'owner' && other?.role === 'remote');
  return { own, other };
}

/** A head source whose news this test gives (the watcher wakes on each). */
function heads(): HeadSource & { tell(): void } {
  const fns = new Set<() => void>();
  return {
    live: false,
    count: 0,
    head: () => null,
    subscribe: (fn) => (fns.add(fn), () => fns.delete(fn)),
    tell: () => {
      for (const fn of fns) fn();
    },
  };
}

function ownerOf(own: { ports: readonly MessagePort[]; rings: readonly SharedArrayBuffer[] }, source: HeadSource | null = null) {
  const owner = new TrackOwner({
    ports: own.ports,
    rings: own.rings,
    log,
    trackers: (handOff: HandOff) => new Map([[chain.chainId, new Tracker(chain, log, { rpc, handOff, heads: source })]]),
  });
  return { owner, tracker: owner.trackers.get(chain.chainId)! };
}

describe('the seam between threads', () => {
  it("a status question ends by its signal: at once when ended, when it ends while the owner is silent; else the owner's answer", async () => {
    const { own, other } = parts();
    const remote = new TrackRemote(other.port, other.ring, log);
    try {
      // No owner reads its port: only the signal ends the question.
      assert.equal(await remote.ask(chain.chainId, 'desk', hashOf(1), AbortSignal.abort()), null);
      const question = new AbortController();
      const asked = remote.ask(chain.chainId, 'desk', hashOf(1), question.signal);
      await tick();
      question.abort();
      const got = await Promise.race([asked, new Promise((r) => setTimeout(() => r('still waiting'), OWNER_MS / 2))]);
      assert.equal(got, null, 'ended by its signal, not by a timer of its own');
    } finally {
      remote.close();
      for (const p of own.ports) p.close();
    }

    // With an owner: its status object of the account's own hash, the signal never ending the wait.
    const next = parts();
    const { owner, tracker } = ownerOf(next.own);
    const other2 = new TrackRemote(next.other.port, next.other.ring, log);
    try {
      tracker.accepted(request(2), RPC, 'hash');
      const question = new AbortController();
      const json = await other2.ask(chain.chainId, 'desk', hashOf(2), question.signal);
      assert.equal(json, tracker.statusOf(tracker.own('desk', hashOf(2))!));
      assert.equal(JSON.parse(json!).status, 'pending');
      question.abort(); // after the answer: nothing more happens
      assert.equal(await other2.ask(chain.chainId, 'other', hashOf(2), AbortSignal.timeout(OWNER_MS)), null, "another account's: none held");
    } finally {
      owner.close();
      other2.close();
      await tracker.close();
    }
  });

  it("an owner's tracker takes what was handed over at its watcher's pass and at a status lookup; closed, it reads nothing more", async () => {
    const { own, other } = parts();
    const news = heads();
    const { owner, tracker } = ownerOf(own, news);
    const remote = new TrackRemote(other.port, other.ring, log);
    try {
      // The first pass (at construction) over: the chain RPC here answers nothing.
      await eventually(() => tracker.watcher.problem !== null, 5_000);
      const pending = tracker.pending;
      remote.hand(chain.chainId, request(10), RPC, 'hash');
      await tick();
      assert.equal(tracker.pending, pending, 'no one listens: not read yet');
      // A new head: the watcher's pass starts by taking what was handed over (its hook, given at construction).
      news.tell();
      assert.equal(tracker.pending, pending + 1, 'read as the pass began');
      remote.hand(chain.chainId, request(11), RPC, 'hash');
      await tick();
      assert.notEqual(tracker.own('desk', hashOf(11)), null, 'read as the status was looked up');
      owner.close();
      remote.hand(chain.chainId, request(12), RPC, 'hash');
      await tick();
      assert.equal(tracker.own('desk', hashOf(12)), null, 'the owner closed: nothing more read');
      assert.equal(tracker.pending, pending + 2);
    } finally {
      owner.close();
      remote.close();
      await tracker.close();
    }
  });
});
