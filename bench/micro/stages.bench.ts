/** Each cheap stage on its own, and auth + grant + rate limit together (the per-account cost). */
import { createAuthStage } from '../../src/stages/auth.js';
import { createFeeStage } from '../../src/stages/fee.js';
import { createGrantStage } from '../../src/stages/grant.js';
import { createHostStage } from '../../src/stages/host.js';
import { createParseStage } from '../../src/stages/parse.js';
import { createRateLimitStage } from '../../src/stages/rate-limit.js';
import { createRouteStage } from '../../src/stages/route.js';
import { Exit } from '../../src/base/errors.js';
import { MirrorAccountStore } from '../../src/accounts/postgres/mirror.js';
import { changesOf } from '../../src/accounts/postgres/snapshot.js';
import { StoreState } from '../../src/accounts/postgres/state.js';
import { ACCOUNT_DOCS, body, config, context, decoders, head, hosts, limiter, store, TXS } from '../common/fixtures.js';
import { keep, runSuite, type Row, type SuiteOptions } from '../common/suite.js';
import type { RunnerStage } from '../../src/pipeline/pipeline.js';

export async function run(o: Pick<SuiteOptions, 'time' | 'rounds'> = {}): Promise<Row[]> {
  const host = createHostStage(hosts);
  const parse = createParseStage();
  const route = createRouteStage(config.limits);
  const auth = createAuthStage(store);
  // The database store's snapshot as every thread holds it (the listener's own store has the
  // same lookup and staleness check): the same accounts, synced just now.
  const state = StoreState.allocate();
  state.synced(false);
  const authDb = createAuthStage(new MirrorAccountStore(state.buffer, 120_000, changesOf(ACCOUNT_DOCS)));
  const grant = createGrantStage();
  const fee = createFeeStage(config);
  const rate = createRateLimitStage(limiter);
  const b = body('eth_sendRawTransaction', [TXS[0]]);
  // One context carried through every stage once, so each stage's input is real.
  const c: any = context(head(), b);
  c.body = b;
  const cheap: RunnerStage[] = [host, parse, route, auth, grant];
  for (const s of cheap) if (s.run(c) instanceof Exit) throw new Error(`fixture rejected at ${s.name}`);
  c.tx = decoders.get(4663)!.decode(Buffer.from(TXS[0]!.slice(2), 'hex'), c.grant);
  if (fee.run(c) instanceof Exit || rate.run(c) instanceof Exit) throw new Error('fixture rejected');
  return runSuite(
    'stages',
    {
      host: () => keep(host.run(c)),
      'parse (eth_sendRawTransaction body)': () => keep(parse.run(c)),
      route: () => keep(route.run(c)),
      'auth (SHA-256 + lookup)': () => keep(auth.run(c)),
      'auth, database account store (SHA-256 + lookup + staleness)': () => keep(authDb.run(c)),
      grant: () => keep(grant.run(c)),
      'fee admission': () => keep(fee.run(c)),
      'rate limit': () => keep(rate.run(c)),
      'auth + grant + rate limit': () => {
        auth.run(c);
        grant.run(c);
        keep(rate.run(c));
      },
    },
    { reference: 'parse (eth_sendRawTransaction body)', ...o },
  );
}
