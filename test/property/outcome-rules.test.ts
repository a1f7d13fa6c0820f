/**
 * Property tests of the outcome rules (forward/attempts.ts), every kind of send (plain, sync,
 * conditional: its -32003/-32005 read by forward/conditional-send.ts) and both
 * strategies, over scripted sequencers answering anything at all (every real node wording we
 * know, arbitrary codes and messages, garbage results, faults written or not, lookups that
 * return anything): no acceptance without the hash (or a receipt of it) or a lookup returning
 * this very transaction; no definite refusal while a sequencer that was written is unresolved.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readPlain } from '../../src/forward/answer.js';
import { Attempts } from '../../src/forward/attempts.js';
import { promised, type SendMethod } from '../../src/forward/parts.js';
import type { Sequencer } from '../../src/forward/sequencer.js';
import type { Answer } from '../../src/upstreams/upstream.js';
import { createLogger } from '../../src/log/log.js';
import { readSync, readSyncResend } from '../../src/sync/sync-send.js';
import { pendingAnswer } from '../../src/sync/receipt.js';
import { result } from '../../src/base/errors.js';
import { CONDITIONAL_METHOD, SYNC_METHOD } from '../../src/rpc/rpc-methods.js';
import { readConditional } from '../../src/forward/conditional-send.js';

const HASH = '0x' + 'ab'.repeat(32);
const OTHER = '0x' + 'cd'.repeat(32);

/** Wordings of real txpools and RPC servers, refusals and acceptances alike. */
const WORDINGS = [
  // geth / op-geth
  'already known',
  'nonce too low',
  'nonce too high',
  'replacement transaction underpriced',
  'transaction underpriced',
  'txpool is full',
  'insufficient funds for gas * price + value',
  'exceeds block gas limit',
  'intrinsic gas too low',
  'max fee per gas less than block base fee',
  'transaction type not supported',
  'invalid sender',
  'oversized data',
  'rlp: unknown transaction type 0x05',
  'future transaction tries to replace pending',
  // reth / anvil
  'transaction already imported',
  'nonce too low: next nonce 5, tx nonce 3',
  'Transaction nonce is too low',
  // erigon
  'ALREADY_EXISTS',
  // nethermind
  'AlreadyKnown',
  'OldNonce, Current nonce: 5, nonce of rejected tx: 3',
  'FeeTooLow',
  'InsufficientFunds',
  // besu
  'Known transaction',
  'Nonce too low',
  'Transaction is already in the pool',
  // nitro
  'transaction already exists',
  'unknown transaction type',
  // EIP-7966
  'The transaction was added to the pool but not yet included',
  'execution reverted',
];

const txObject = (hash: string) => ({ hash, nonce: '0x1', blockNumber: null });
const receipt = (hash: string) => ({ transactionHash: hash, status: '0x1', blockNumber: '0x10' });

const answerArb: fc.Arbitrary<Answer> = fc.oneof(
  fc.constant<Answer>({ kind: 'result', result: HASH }),
  fc.constant<Answer>({ kind: 'result', result: HASH.toUpperCase().replace('0X', '0x') }),
  fc.constant<Answer>({ kind: 'result', result: OTHER }),
  fc.constant<Answer>({ kind: 'result', result: receipt(HASH) }),
  fc.constant<Answer>({ kind: 'result', result: receipt(OTHER) }),
  fc.jsonValue().map((result): Answer => ({ kind: 'result', result })),
  fc
    .record({
      code: fc.oneof(fc.constantFrom(-32000, -32003, -32005, -32601, -32602, 3, 4, 5), fc.integer()),
      message: fc.oneof(fc.constantFrom(...WORDINGS), fc.string()),
    })
    .map(({ code, message }): Answer => ({ kind: 'error', code, message, data: undefined })),
  fc
    .record({
      sent: fc.boolean(),
      busy: fc.boolean(),
      why: fc.constantFrom('transport: other side closed', 'timeout after 50 ms', 'HTTP 502', 'HTTP 200 with a non-JSON body'),
    })
    .map(({ sent, busy, why }): Answer => (busy && !sent ? { kind: 'fault', why, sent, busy: true } : { kind: 'fault', why, sent })),
);
const lookupArb: fc.Arbitrary<Answer> = fc.oneof(
  fc.constant<Answer>({ kind: 'result', result: txObject(HASH) }),
  fc.constant<Answer>({ kind: 'result', result: txObject(OTHER) }),
  fc.constant<Answer>({ kind: 'result', result: null }),
  fc.jsonValue().map((result): Answer => ({ kind: 'result', result })),
  fc.constant<Answer>({ kind: 'error', code: -32601, message: 'method not found', data: undefined }),
  fc.constant<Answer>({ kind: 'fault', why: 'timeout after 50 ms', sent: true }),
);

/** One scripted sequencer: its answers in turn (the last repeats), and what it said. */
class Scripted {
  readonly label: string;
  readonly labelJson: string;
  readonly eligible = true;
  readonly said: Array<{ method: string; a: Answer }> = [];
  private s = 0;
  private l = 0;
  constructor(
    name: string,
    private readonly sends: readonly Answer[],
    private readonly lookups: readonly Answer[],
  ) {
    this.label = name;
    this.labelJson = JSON.stringify(name);
  }
  markDown(): void {}
  async call(method: string): Promise<Answer> {
    await Promise.resolve();
    const a =
      method === 'eth_getTransactionByHash'
        ? this.lookups[Math.min(this.l++, this.lookups.length - 1)]!
        : this.sends[Math.min(this.s++, this.sends.length - 1)]!;
    this.said.push({ method, a });
    return a;
  }
  /** Whether the bytes were ever handed to it (an answer, or a fault after writing). */
  get written(): boolean {
    return this.said.some((x) => x.method !== 'eth_getTransactionByHash' && (x.a.kind !== 'fault' || x.a.sent));
  }
  /** Its last answer to the bytes. */
  get lastSend(): Answer | undefined {
    return this.said.filter((x) => x.method !== 'eth_getTransactionByHash').at(-1)?.a;
  }
  /** Whether anything it said establishes acceptance by the rules. */
  confirms(sync: boolean): boolean {
    return this.said.some(({ method, a }) => {
      if (a.kind !== 'result') return false;
      if (method === 'eth_getTransactionByHash') return typeof a.result === 'object' && a.result !== null && (a.result as { hash?: unknown }).hash === HASH;
      if (method === SYNC_METHOD && sync)
        return typeof a.result === 'object' && a.result !== null && (a.result as { transactionHash?: unknown }).transactionHash === HASH;
      return typeof a.result === 'string' && a.result.toLowerCase() === HASH;
    });
  }
}

const log = createLogger({ level: 'fatal', destination: { write: () => true } as never });
const REQ = { hash: HASH, rawHex: '0x02', account: 'a', reqId: 'r', sender: null };

function kinds(): Array<[string, SendMethod]> {
  const times = { timeoutMs: 40, queueMs: 10 };
  return [
    [
      'plain',
      {
        name: undefined,
        call: (s, r) => s.call('eth_sendRawTransaction', `["${r.rawHex}"]`, times),
        read: readPlain,
        readResend: readPlain,
        knownExit: result,
      },
    ],
    [
      'sync',
      {
        name: SYNC_METHOD,
        call: (s, r) => s.call(SYNC_METHOD, `["${r.rawHex}"]`, times),
        read: readSync,
        readResend: readSyncResend,
        knownExit: pendingAnswer,
      },
    ],
    [
      'conditional',
      {
        name: CONDITIONAL_METHOD,
        call: (s, r) => s.call(CONDITIONAL_METHOD, `["${r.rawHex}",{}]`, times),
        read: readConditional,
        readResend: readConditional,
        resend: (s, r, t) => s.call(CONDITIONAL_METHOD, `["${r.rawHex}",{}]`, t),
        knownExit: result,
      },
    ],
  ];
}

describe('outcome rules, properties', () => {
  for (const [name, kind] of kinds()) {
    for (const strategy of ['failover', 'fanout'] as const) {
      it(`${name} send, ${strategy}: acceptance only by the hash or a confirming lookup; a refusal only when no written sequencer is unresolved`, async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.record({ sends: fc.array(answerArb, { minLength: 1, maxLength: 4 }), lookups: fc.array(lookupArb, { minLength: 1, maxLength: 3 }) }), {
              minLength: 1,
              maxLength: 3,
            }),
            async (script) => {
              const seqs = script.map((s, i) => new Scripted(`s${i}`, s.sends, s.lookups));
              const attempts = new Attempts(1, { timeoutMs: 40, queueMs: 10 }, null, log);
              const asSeq = seqs as unknown as Sequencer[];
              const exit = await promised((done) =>
                strategy === 'failover' ? attempts.failover(asSeq, REQ, kind, done) : attempts.fanout(asSeq, REQ, kind, done),
              );
              const sync = kind.name === SYNC_METHOD;
              if (exit.reason === 'ok' || exit.reason === 'sync_timeout') {
                assert.ok(
                  seqs.some((s) => s.confirms(sync)),
                  `accepted (${exit.reason}) without the hash or a confirming lookup: ${JSON.stringify(seqs.map((s) => s.said))}`,
                );
              }
              if (exit.reason === 'upstream_rejected') {
                for (const s of seqs) {
                  if (!s.written) continue;
                  const last = s.lastSend;
                  assert.equal(last?.kind, 'error', `refused while ${s.label} was written and unresolved: ${JSON.stringify(s.said)}`);
                  // A refusal passed to a sync client is never the EIP's code 4 (it reads as accepted).
                  if (sync) assert.ok(!exit.body('1').includes('"code":4,'), exit.body('1'));
                }
              }
              // A conditional transaction is never sent plainly, neither first nor in a resend.
              if (kind.name === CONDITIONAL_METHOD)
                for (const s of seqs) for (const x of s.said) assert.ok(x.method !== 'eth_sendRawTransaction', `${s.label} was sent the bytes plainly`);
              if (exit.reason === 'upstream_unavailable' || exit.reason === 'overloaded')
                assert.ok(!seqs.some((s) => s.written), `"not sent" while a sequencer was written: ${JSON.stringify(seqs.map((s) => s.said))}`);
            },
          ),
          { numRuns: 150 },
        );
      });
    }
  }
});

describe('outcome rules, no sequencer to send to', () => {
  // A fanout chain's express lane refusing the bytes (proven not sequenced) falls back to the
  // healthy sequencers, which may all have gone out meanwhile: nothing is sent, and the answer
  // says so at once (503), never a request left unanswered.
  for (const [name, kind] of kinds()) {
    for (const strategy of ['failover', 'fanout'] as const) {
      it(`${name} send, ${strategy} over none: 503 upstream_unavailable at once`, async () => {
        const attempts = new Attempts(1, { timeoutMs: 40, queueMs: 10 }, null, log);
        const run = promised((done) => (strategy === 'failover' ? attempts.failover([], REQ, kind, done) : attempts.fanout([], REQ, kind, done)));
        const exit = await Promise.race([run, new Promise<null>((r) => setTimeout(() => r(null), 1000).unref())]);
        assert.ok(exit !== null, 'never answered');
        assert.equal(exit.reason, 'upstream_unavailable');
      });
    }
  }
});

describe('the lookup', () => {
  it("asked of the chain's RPC itself (the receipt mode's uncertain send): one call, not two", async () => {
    let calls = 0;
    const rpc = {
      url: 'http://rpc',
      label: 'http://rpc',
      labelJson: '"http://rpc"',
      call: async (): Promise<Answer> => (calls++, { kind: 'result', result: null }),
      close: async () => {},
    };
    const attempts = new Attempts(1, { timeoutMs: 40, queueMs: 10 }, rpc, log);
    assert.equal(await attempts.lookup(rpc, HASH, performance.now() + 40), 'unknown');
    assert.equal(calls, 1);
  });
});
