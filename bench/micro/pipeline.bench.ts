/**
 * The whole pipeline in-process (no sockets): "all pass" with an instant forward (the default
 * configuration, crypto.signature = "curve"; also with "recover"), and a request rejected at
 * each stage N. The reference is "all
 * pass": each rejection is a fraction of it.
 */
import type { Exit } from '../../src/base/errors.js';
import { body, config, context, recoverDecoders, head, KEY_OFF, KEY_SLOW, pipeline, signedPool, TXS } from '../common/fixtures.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { runSuite, type Row, type SuiteOptions } from '../common/suite.js';
import type { Body, RequestHead } from '../../src/pipeline/context.js';

export async function run(o: Pick<SuiteOptions, 'time' | 'rounds'> = {}): Promise<Row[]> {
  let done: ((e: Exit) => void) | null = null;
  /** Runs one request through a pipeline built over `decs`, settling with its answer. */
  const runner = (decs?: Parameters<typeof pipeline>[1]) => {
    const p = pipeline({ exit: (_c, e) => done!(e) }, decs);
    return (h: RequestHead, b: Body) =>
      new Promise<Exit>((resolve) => {
        done = resolve;
        p.run(context(h, b, p.initFields));
      });
  };
  const go = runner();
  const goRecover = runner(recoverDecoders);
  // The same, with the metrics the server feeds: one request observation per answer, and
  // per-stage timing on the requests the pipeline samples (STAGE_SAMPLE_MASK).
  const metrics = new Metrics(config, { version: 'bench', uws: 'bench' });
  const observer = metrics.requestObserver('http');
  const pm = pipeline({
    exit: (c, e, stage) => {
      observer.request(c, e, stage, 10);
      done!(e);
    },
    observer,
  });
  const goMetrics = (h: RequestHead, b: Body) =>
    new Promise<Exit>((resolve) => {
      done = resolve;
      pm.run(context(h, b, pm.initFields));
    });
  const untipped = (await signedPool(1, { value: 1n }))[0]!;
  const malformed = TXS[1]!.slice(0, -4);
  let i = 0;
  const send = () => body('eth_sendRawTransaction', [TXS[i++ & 63]]);
  const cases: Record<string, () => Promise<Exit>> = {
    'all pass (instant forward)': () => go(head(), send()),
    'all pass, with metrics': () => goMetrics(head(), send()),
    'all pass, signature check recover': () => goRecover(head(), send()),
    'eth_chainId (answered at route)': () => go(head(), body('eth_chainId', [])),
    'eth_chainId, with metrics': () => goMetrics(head(), body('eth_chainId', [])),
    'reject at 0 host': () => go(head({ host: 'evil.example' }), send()),
    'reject at 1 size cap': () => go(head({ declaredBytes: 70_000 }), send()),
    'reject at 2 parse': () => go(head(), { text: '{"jsonrpc":', bytes: 11 }),
    'reject at 3 route': () => go(head(), body('eth_getBalance', [])),
    'reject at 4 auth': () => go(head({ apiKey: 'txg_nope' }), send()),
    'reject at 5 grant': () => go(head({ apiKey: KEY_OFF }), send()),
    'reject at 6 decode (malformed RLP)': () => go(head(), body('eth_sendRawTransaction', [malformed])),
    'reject at 7 fee': () => go(head(), body('eth_sendRawTransaction', [untipped])),
    'reject at 9 rate limit': () => go(head({ apiKey: KEY_SLOW }), send()),
  };
  await cases['reject at 9 rate limit']!(); // spend the slow account's only token
  // Sanity: each case really exits where its name says.
  for (const [name, f] of Object.entries(cases)) {
    const e = await f();
    const m = /at (\d)/.exec(name);
    if (m !== null && e.reason === 'ok') throw new Error(`${name}: passed`);
    if (m === null && e.reason !== 'ok') throw new Error(`${name}: ${e.reason}`);
  }
  return runSuite('pipeline', cases, { reference: 'all pass (instant forward)', ...o });
}
