/**
 * The one log line of each answered request on POST /: built by hand as a JSON fragment (no
 * object, no serializer on the hot path), batched by the log sink; eth_chainId successes (the
 * clients' keep-alive) at debug, everything else at info. And the Server-Timing header of a
 * profiled request.
 */
import { FastLog, quote } from '../access-log.js';
import type { Exit } from '../errors.js';
import type { Logger } from '../log.js';
import type { RequestContext } from '../pipeline/context.js';
import { STAGE_NAMES, type StageName } from '../pipeline/pipeline.js';

export class RequestLog {
  private readonly fast: FastLog;

  constructor(private readonly log: Logger) {
    this.fast = new FastLog(log);
  }

  exit(ctx: RequestContext, exit: Exit, stage: StageName, err: unknown, micros: number): void {
    const rpc = ctx.rpc;
    const ok = exit.reason === 'ok';
    // eth_chainId is the clients' keep-alive: its successes log at debug, everything else at info.
    const level = ok && rpc?.method === 'eth_chainId' ? 'debug' : 'info';
    if (err !== undefined) {
      // Rare: let pino serialize the error (stack, cause).
      this.log.error({ reqId: ctx.reqId, status: exit.status, stage, err }, 'request failed');
      return;
    }
    const log = this.fast;
    if (!log.enabled(level)) return;
    const method =
      rpc === undefined ? '"POST /"' : rpc.method === 'eth_sendRawTransaction' || rpc.method === 'eth_chainId' ? '"' + rpc.method + '"' : quote(rpc.method, 64);
    let f = '"reqId":"' + ctx.reqId + '","method":' + method + ',"status":' + exit.status + ',"us":' + micros;
    if (!ok) {
      f += ',"reason":"' + exit.reason + '","stage":"' + stage + '"';
      if (exit.detail !== undefined) f += ',"detail":' + quote(exit.detail);
    }
    if (ctx.chain !== undefined) f += ',"chainId":' + ctx.chain.chainId;
    if (ctx.account !== undefined) f += ',"account":"' + ctx.account.id + '"';
    if (ctx.tx !== undefined) f += ',"tx":"' + ctx.tx.hash + '"';
    // The client left before its answer (after the forward was sent): the outcome above is
    // real, but nobody received it; support needs to tell the two apart.
    if (ctx.aborted && exit.reason !== 'client_closed') f += ',"clientGone":true';
    log.write(level, f, ok ? 'request' : 'rejected');
  }
}

/** `host;dur=0.003, size_cap;dur=0.010, …` for the stages that ran. */
export function serverTiming(t: Float64Array): string {
  let s = '';
  for (let i = 0; i < t.length; i++) {
    const ms = t[i]!;
    if (ms > 0) s += (s === '' ? '' : ', ') + `${STAGE_NAMES[i]};dur=${ms.toFixed(3)}`;
  }
  return s;
}
