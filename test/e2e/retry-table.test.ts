/**
 * One retry table: every reason names one retry rule (src/base/reasons.ts RETRY), the retry table
 * (README.md and docs/clients.md), the Errors table and the client kit table (docs/clients.md)
 * are rendered from it, no reason's advice restates a
 * retry rule of its own, and each request's log line names its outcome, in the words of its
 * forward's audit lines.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { block } from '../../scripts/readme-tables.js';
import { renderKitOutcomes, renderRetry } from '../../scripts/readme-retry.js';
import { notSent, uncertain } from '../../src/forward/answer.js';
import { outcomeOf, REASON_NAMES, REASONS, RETRY } from '../../src/base/reasons.js';
import { eventually, newKey } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged, useGate } from '../support/gate-fixture.js';

keysNeverLogged();

const README = readFileSync(join(import.meta.dirname, '../../../README.md'), 'utf8');
const CLIENTS = readFileSync(join(import.meta.dirname, '../../../docs/clients.md'), 'utf8');

describe('the retry table', () => {
  it('the README and docs/clients.md show the rendered tables (npm run readme)', () => {
    assert.equal(block(README, 'retry'), renderRetry(), 'README.md is out of date: run npm run readme');
    assert.equal(block(CLIENTS, 'retry'), renderRetry(), 'docs/clients.md is out of date: run npm run readme');
    assert.equal(block(CLIENTS, 'kit-outcomes'), renderKitOutcomes(), 'docs/clients.md is out of date: run npm run readme');
  });
  it('every reason has one rule, each rule is used, and no reason restates a retry rule in its own words', () => {
    for (const r of REASON_NAMES) {
      assert.ok(REASONS[r].retry in RETRY, r);
      assert.doesNotMatch(REASONS[r].action, /\b(retry|retries|resend|resubmit|back off|backoff)\b/i, `${r}: the retry rule is stated once, in RETRY`);
    }
    for (const rule of Object.keys(RETRY))
      if (rule !== 'done')
        assert.ok(
          REASON_NAMES.some((r) => REASONS[r].retry === rule),
          rule,
        );
    // 503 is never "at once": the same rule (backoff) as every other answer that was not sent.
    for (const r of REASON_NAMES.filter((x) => REASONS[x].status === 503)) assert.equal(REASONS[r].retry, 'backoff', r);
    const pages: [string, string][] = [
      ['README.md', README],
      ['docs/clients.md', CLIENTS],
    ];
    for (const [page, text] of pages)
      assert.doesNotMatch(text, /resen[dt] at once|resubmit at once/i, `${page}: no retry advice outside the table contradicts it`);
  });
  it('outcomes: 200 accepted, refusals refused, 429/503 not_sent, 502/500 uncertain, 202 pending', () => {
    assert.equal(outcomeOf('ok'), 'accepted');
    for (const r of REASON_NAMES) {
      const s = REASONS[r].status;
      const expected = s === 202 ? 'pending' : s === 502 || s === 500 ? 'uncertain' : s === 429 || s === 503 || s === 499 ? 'not_sent' : 'refused';
      assert.equal(outcomeOf(r), expected, r);
    }
    // A sequencer's part with no answer is named by its state (the audit line's outcome): the
    // word of the answer the forward gives for it.
    assert.equal(uncertain('0x00').outcome, 'uncertain');
    assert.equal(notSent(true).outcome, 'not_sent');
    assert.equal(notSent(false).outcome, 'not_sent');
  });
});

describe('request log lines name the outcome', () => {
  let stub: StubSequencer;
  const key = newKey();
  const gate = useGate(async () => {
    stub = await new StubSequencer().start();
    return { sequencers: [stub.url], accounts: [{ id: 'mm', keys: [key] }] };
  });
  before(() => eventually(async () => (await rpc(gate.port, 'eth_chainId', [])).status === 200));
  after(() => stub.stop().catch(() => {}));

  const lineOf = async (reqId: string) =>
    (await eventually(
      () =>
        gate.logs
          .map((l) => JSON.parse(l) as { reqId?: string; msg: string; us?: number; audit?: string })
          .find((l) => l.reqId === reqId && l.audit === undefined && l.us !== undefined),
      3000,
    ))!;

  const auditOutcomes = (reqId: string) =>
    gate.logs
      .map((l) => JSON.parse(l) as { reqId?: string; audit?: string; outcome?: string })
      .filter((l) => l.reqId === reqId && l.audit === 'forward')
      .map((l) => l.outcome);

  it('accepted (200), refused (401), uncertain (502), not_sent (503): no line says "rejected"', async () => {
    const cases: [number, string, () => void, string | undefined][] = [
      [200, 'accepted', () => (stub.behaviour = () => ({ kind: 'accept' })), key],
      [401, 'refused', () => {}, 'txg_not_a_key'],
      [502, 'uncertain', () => (stub.behaviour = () => ({ kind: 'http', status: 500, body: 'oops' })), key],
    ];
    let nonce = 40;
    for (const [status, msg, arrange, k] of cases) {
      arrange();
      const r = await rpc(gate.port, 'eth_sendRawTransaction', [await sign1559({ nonce: nonce++ })], k === undefined ? {} : { key: k });
      assert.equal(r.status, status, r.text);
      const reqId = String(r.headers['x-request-id']);
      assert.equal((await lineOf(reqId)).msg, msg);
      // The forward's audit line says the same word (one vocabulary, reasons.ts).
      if (status !== 401) assert.deepEqual(auditOutcomes(reqId), [msg]);
    }
    // Not sent: the only sequencer is down (the health board says so before anything is written).
    await stub.stop();
    const down = await eventually(async () => {
      const r = await rpc(gate.port, 'eth_sendRawTransaction', [await sign1559({ nonce: nonce++ })], { key });
      return r.status === 503 ? r : null;
    }, 10_000);
    assert.equal(down!.json.error.data.reason, 'upstream_unavailable');
    assert.equal((await lineOf(String(down!.headers['x-request-id']))).msg, 'not_sent');
    // A part tried before the board knew (connection refused) is not_sent too; none once it knows.
    assert.ok(
      auditOutcomes(String(down!.headers['x-request-id'])).every((o) => o === 'not_sent'),
      'nothing was sent',
    );
    assert.ok(!gate.logs.some((l) => JSON.parse(l).msg === 'rejected'));
  });
});
