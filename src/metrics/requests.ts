/**
 * The request series (metrics.ts builds one per front end, by its `transport` label): answers by
 * method, status and reason, their durations, the per-stage durations the pipeline samples, and
 * the rate-limited submissions by account. A method's outcomes are bound up front (alerts see
 * zeros, not gaps), derived from where each reason is given in the one reasons table; anything
 * else binds on first use.
 */
import type { Exit } from '../base/errors.js';
import type { BaseCtx } from '../pipeline/context.js';
import type { RequestObserver } from '../pipeline/pipeline.js';
import { REASON_NAMES, REASONS, type Where } from '../base/reasons.js';
import { CHAIN_ID_METHOD, CONDITIONAL_METHOD, SEND_METHOD, STATUS_METHOD, SYNC_METHOD } from '../rpc/rpc-methods.js';
import { finished } from '../stages/list.js';
import type { METRICS } from './catalog.js';
import type { Families } from './family-set.js';
import type { Counter, FastHistogram } from './families.js';

/** The method label: a fixed set, never free text (index order is used on the hot path). */
const METHODS = [CHAIN_ID_METHOD, SEND_METHOD, 'other', 'unparsed', SYNC_METHOD, STATUS_METHOD, CONDITIONAL_METHOD] as const;
const SYNC_METHOD_INDEX = 4;
const STATUS_METHOD_INDEX = 5;
const CONDITIONAL_METHOD_INDEX = 6;
/** The reasons given at these stages, from the one reasons table. */
const at = (...where: Where[]) => REASON_NAMES.filter((r) => REASONS[r].stages.some((w) => where.includes(w)));
/** A method's outcomes are bound up front, derived from where each reason is given. */
const POSSIBLE: Record<(typeof METHODS)[number], readonly string[]> = {
  // Refused before the method is known.
  unparsed: at('host', 'size_cap', 'parse', 'any'),
  // Answered at the route stage: its refusals, or a failure.
  eth_chainId: ['ok', ...at('route').filter((r) => r !== 'method_not_found'), 'internal_error'],
  other: ['method_not_found'],
  // Any stage's but the host's, the parse's and the unknown-method refusal.
  eth_sendRawTransaction: submissionOutcomes(),
  // Its own series only where a chain serves it (else it is a method not served: `other`).
  eth_sendRawTransactionSync: submissionOutcomes(),
  eth_sendRawTransactionConditional: submissionOutcomes(),
  // A status query: the admission up to the grant, then the status stage, which answers it (its own series only where a chain tracks).
  txgate_getTransactionStatus: ['ok', ...at('size_cap', 'auth', 'grant', 'status').filter((r) => r !== 'sync_not_granted'), 'invalid_params', 'internal_error'],
};
function submissionOutcomes(): string[] {
  return [
    'ok',
    ...REASON_NAMES.filter((r) => REASONS[r].stages.some((w) => w !== 'front_end' && w !== 'host')).filter(
      (r) => !at('parse').includes(r) && r !== 'method_not_found',
    ),
  ];
}

/** One transport's request series: by method index, by reason. */
interface TransportSeries {
  readonly transport: string;
  readonly requests: Map<string, Counter>[];
  readonly durations: Record<string, FastHistogram>[];
}

export class RequestMetrics {
  /** By stage name: bound when the pipeline is built (stages), or on a stage's first sample. */
  private readonly stageChildren = new Map<string, FastHistogram>();
  private readonly limitedByAccount = new Map<string, Counter>();

  constructor(
    private readonly f: Families<typeof METRICS>,
    /** Some chain serves eth_sendRawTransactionSync: the method has series of its own. */
    private readonly syncServed: boolean,
    /** Some chain tracks its transactions: txgate_getTransactionStatus has series of its own. */
    private readonly statusServed: boolean,
    /** Some chain serves eth_sendRawTransactionConditional: the method has series of its own. */
    private readonly conditionalServed = false,
  ) {}

  /** The observer of one front end's requests; the stage series are the pipeline's, whichever transport. */
  observer(transport: string): RequestObserver {
    const series = this.bind(transport);
    return {
      request: (ctx: BaseCtx, exit: Exit, _stage: string, micros: number) => this.observe(series, ctx, exit, micros),
      stage: (stage: string, ms: number) => this.stageSeries(stage).observe(ms / 1000),
      // Bound up front, as the request series: alerts see zeros, not gaps.
      stages: (names: readonly string[]) => {
        for (const n of names) this.stageSeries(n);
      },
    };
  }

  private stageSeries(stage: string): FastHistogram {
    let h = this.stageChildren.get(stage);
    if (h === undefined) this.stageChildren.set(stage, (h = this.f.stages.child({ stage })));
    return h;
  }

  private bind(transport: string): TransportSeries {
    const requests: Map<string, Counter>[] = [];
    const durations: Record<string, FastHistogram>[] = [];
    METHODS.forEach((method, i) => {
      if ((i === SYNC_METHOD_INDEX && !this.syncServed) || (i === STATUS_METHOD_INDEX && !this.statusServed)) return;
      if (i === CONDITIONAL_METHOD_INDEX && !this.conditionalServed) return;
      const m = new Map<string, Counter>();
      for (const reason of POSSIBLE[method]) {
        const status = reason === 'ok' ? 200 : REASONS[reason as keyof typeof REASONS].status;
        m.set(reason, this.f.requests.child({ method, status, reason, transport }));
      }
      requests[i] = m;
      durations[i] = {
        ok: this.f.duration.child({ method, outcome: 'ok', transport }),
        rejected: this.f.duration.child({ method, outcome: 'rejected', transport }),
        upstream: this.f.duration.child({ method, outcome: 'upstream', transport }),
      };
    });
    return { transport, requests, durations };
  }

  private observe(t: TransportSeries, ctx: BaseCtx, exit: Exit, micros: number): void {
    const rpc = finished(ctx).rpc;
    const mi =
      rpc === undefined
        ? 3
        : rpc.method === CHAIN_ID_METHOD
          ? 0
          : rpc.method === SEND_METHOD
            ? 1
            : rpc.method === SYNC_METHOD && this.syncServed
              ? SYNC_METHOD_INDEX
              : rpc.method === STATUS_METHOD && this.statusServed
                ? STATUS_METHOD_INDEX
                : rpc.method === CONDITIONAL_METHOD && this.conditionalServed
                  ? CONDITIONAL_METHOD_INDEX
                  : 2;
    const reason = exit.reason;
    const byReason = t.requests[mi]!;
    let c = byReason.get(reason);
    if (c === undefined) {
      c = this.f.requests.child({ method: METHODS[mi]!, status: exit.status, reason, transport: t.transport });
      byReason.set(reason, c);
    }
    c.value++;
    const d = t.durations[mi]!;
    (reason === 'ok' ? d.ok! : reason.startsWith('upstream') ? d.upstream! : d.rejected!).observe(micros / 1e6);
    if (reason === 'rate_limited') {
      const account = finished(ctx).account;
      if (account !== undefined) {
        let c = this.limitedByAccount.get(account.id);
        if (c === undefined) this.limitedByAccount.set(account.id, (c = this.f.limited.child({ account: account.id })));
        c.value++;
      }
    }
  }
}
