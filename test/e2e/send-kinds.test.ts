/**
 * Every kind of send (plain, sync, conditional) through the one send path (src/forward/flight.ts),
 * built directly over a stub sequencer: an answer path that throws, and hooks that throw on every
 * call. Each request is answered once, identical sends that joined get the outcome, the process
 * lives (nothing rejects unhandled), and the duplicates tables and the places are given back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/config.js';
import { ChainDuplicates } from '../../src/forward/dedup.js';
import { ChainLink } from '../../src/forward/chain-link.js';
import { ChainForwarder } from '../../src/forward/forwarder.js';
import { ConditionalSend } from '../../src/forward/conditional-send.js';
import { HealthBoard } from '../../src/health/board.js';
import type { ForwardRequest } from '../../src/forward/parts.js';
import { SyncSender } from '../../src/sync/sync-send.js';
import { Later } from '../../src/pipeline/later.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import type { Exit } from '../../src/base/errors.js';
import { initCrypto } from '../../src/base/native.js';
import type { BaseCtx } from '../../src/pipeline/context.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

let nonce = 0;
const next = () => sign1559({ nonce: nonce++ });
const conditions = { json: '{}', blockNumberMin: null, blockNumberMax: null, timestampMin: null, timestampMax: null, cost: 0 };
const request = (raw: string): ForwardRequest => ({ hash: txHash(raw), rawHex: raw, account: 'mm', reqId: 't-1', sender: null, t0: performance.now() });

/** A receipt of the call's bytes, for the sync method; the hash for the others. */
function sequencer(): StubSequencer {
  const stub = new StubSequencer();
  stub.behaviour = (call) =>
    call.method === 'eth_sendRawTransactionSync'
      ? { kind: 'result', result: { transactionHash: txHash(String(call.params[0])), status: '0x1', blockNumber: '0x1' } }
      : { kind: 'accept' };
  return stub;
}

interface Sends {
  readonly dups: ChainDuplicates;
  readonly forwarder: ChainForwarder;
  send(kind: Kind, req: ForwardRequest): Exit | PromiseLike<Exit>;
  close(): Promise<unknown>;
}
type Kind = 'plain' | 'sync' | 'conditional';
const KINDS: readonly Kind[] = ['plain', 'sync', 'conditional'];

/** One chain's three sends over `stub`, one place each (maxInFlight and sync.maxWaiting 1): a place not given back refuses the next send. */
function sends(stub: StubSequencer, observer: object = {}): Sends {
  const cfg = parseConfig(
    {
      chains: [
        {
          chainId: DEV_CHAIN_ID,
          hosts: ['localhost'],
          sequencers: [stub.url],
          forward: { timeoutMs: 1000, maxInFlight: 1 },
          sync: { enabled: true, mode: 'forward', maxWaiting: 1 },
          conditional: { enabled: true },
        },
      ],
    },
    '/',
    {},
  );
  const link = new ChainLink({ chain: cfg.chains[0]!, board: HealthBoard.allocate(1), slots: [0], log: pino({ level: 'silent' }), observer });
  const dups = new ChainDuplicates({ acceptedTtlMs: 0, maxEntries: 10 });
  const forwarder = new ChainForwarder(link, dups, observer);
  const conditional = new ConditionalSend(link, forwarder);
  const sync = new SyncSender(link, { plainSend: (r) => forwarder.forward(r), duplicates: dups, observer });
  return {
    dups,
    forwarder,
    send: (kind, req) => (kind === 'plain' ? forwarder.forward(req) : kind === 'sync' ? sync.send(req, 2000) : conditional.send(req, conditions)),
    close: () => Promise.all([forwarder.close(), sync.close(), link.close()]),
  };
}

describe('every kind of send, one send path (direct)', () => {
  const stubs: StubSequencer[] = [];
  let rejections = 0;
  const count = () => rejections++;
  before(async () => {
    await initCrypto();
    process.on('unhandledRejection', count);
  });
  after(async () => {
    process.off('unhandledRejection', count);
    await Promise.all(stubs.map((s) => s.stop()));
  });
  const stub = async () => {
    const s = await sequencer().start();
    stubs.push(s);
    return s;
  };

  for (const kind of KINDS) {
    it(`${kind}: an answer path that throws once the send concluded: answered once, the joiner told, the process lives, tables and places given back`, async () => {
      const s = sends(await stub());
      const raw = await next();
      const out = s.send(kind, request(raw));
      const joined = s.send(kind, request(raw));
      assert.ok(out instanceof Later, 'its own send is its flight, a Later');
      assert.ok(joined instanceof Promise, 'the identical send joined its outcome');
      let answered = 0;
      out.on(() => {
        answered++;
        throw new Error('answer path failed');
      });
      const exit = await joined;
      assert.equal(exit.reason, 'ok', `${kind}: ${exit.body('1')}`);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(answered, 1, 'answered once');
      assert.equal(rejections, 0, 'nothing rejected unhandled');
      assert.equal(s.dups.pending.size, 0, 'no plain send left in flight');
      assert.equal(s.dups.waiting.size, 0, 'no sync call left waiting');
      assert.equal(s.forwarder.places.count, 0, 'the forward places given back');
      // One place per kind: a place not given back would refuse this one as overloaded.
      assert.equal((await s.send(kind, request(await next()))).reason, 'ok');
      await s.close();
    });
  }

  it('hooks that throw on every call (forward metrics, acceptance, in-flight, sync counts): every kind answered, its places given back, no table left holding', async () => {
    const calls = new Map<string, number>();
    const throwing = (name: string) => () => {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      throw new Error(`${name} hook failed`);
    };
    const observer = {
      forward: throwing('forward'),
      accepted: throwing('accepted'),
      inFlight: throwing('inFlight'),
      sync: throwing('sync'),
      syncWaiting: throwing('syncWaiting'),
    };
    const s = sends(await stub(), observer);
    for (let round = 0; round < 2; round++)
      for (const kind of KINDS) {
        const exit = await s.send(kind, request(await next()));
        assert.equal(exit.reason, 'ok', `${kind}, round ${round}: ${exit.body('1')}`);
      }
    await new Promise((r) => setTimeout(r, 50));
    for (const hook of Object.keys(observer)) assert.ok((calls.get(hook) ?? 0) > 0, `the ${hook} hook was called`);
    assert.equal(rejections, 0);
    assert.equal(s.dups.pending.size + s.dups.waiting.size, 0);
    assert.equal(s.forwarder.places.count, 0);
    await s.close();
  });
});

describe('the pipeline owns the answer after a wait', () => {
  it("an exit hook that throws as a send's flight settles: said once by the pipeline's failed hook, never to the send", async () => {
    await initCrypto();
    const stub = await sequencer().start();
    const s = sends(stub);
    const exits: string[] = [];
    const failed: unknown[] = [];
    let said: () => void = () => undefined;
    const saidOnce = new Promise<void>((r) => (said = r));
    const flight = s.send('plain', request(await next()));
    const p = new Pipeline([{ name: 'forward', reasons: ['ok'], run: () => flight }], {
      exit: (_ctx, exit) => {
        exits.push(exit.reason);
        throw new Error('the writer failed');
      },
      failed: (_ctx, e) => {
        failed.push(e);
        said();
      },
    });
    p.run({ reqId: 'r', t0: 0, idJson: 'null', aborted: false, timed: false, timings: null } as unknown as BaseCtx);
    // Bounded: a pipeline that did not take the throw fails here rather than hanging the suite.
    await Promise.race([saidOnce, new Promise((_, fail) => setTimeout(() => fail(new Error("the pipeline's failed hook was never told")), 5_000).unref())]);
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(exits, ['ok'], 'the exit hook called once');
    assert.equal(failed.length, 1, "the throw given to the pipeline's failed hook");
    assert.equal(s.dups.pending.size, 0);
    assert.equal(s.forwarder.places.count, 0);
    await s.close();
    await stub.stop();
  });
});
