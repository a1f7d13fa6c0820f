/**
 * The one log line of each request, built field by field (log-line.ts) and batched by the log
 * sink: a pipeline answer on POST / (eth_chainId successes, the clients' keep-alive, at debug;
 * everything else at info), a refusal by the front end before the pipeline (404, 405, framing),
 * and a GET answer.
 */
import type { Exit } from '../base/errors.js';
import { FastLog } from '../log/log-line.js';
import type { Logger } from '../log/log.js';
import type { ExitLog } from '../pipeline/answer-path.js';
import type { BaseCtx } from '../pipeline/context.js';
import { finished } from '../stages/list.js';
import { outcomeOf } from '../base/reasons.js';
import { CHAIN_ID_METHOD, SEND_METHOD } from '../rpc/rpc-methods.js';
import { accountField, chainAccountFields, chainField, methodField, methodStatusUsKey, statusField } from './request-fields.js';

export class RequestLog implements ExitLog {
  private readonly fast: FastLog;

  constructor(private readonly log: Logger) {
    this.fast = new FastLog(log);
  }

  /**
   * A pipeline answer. `unanswered`: the answer was to close its connection, and the connection
   * closed before it could be written (http/write.ts). `via` names the request while its method is
   * unknown (`POST /`).
   */
  exit(base: BaseCtx, exit: Exit, stage: string, err: unknown, micros: number, unanswered: boolean, via: string): void {
    const ctx = finished(base);
    const rpc = ctx.rpc;
    const ok = exit.reason === 'ok';
    if (err !== undefined) {
      // Rare: let pino serialize the error (stack, cause).
      this.log.error({ reqId: ctx.reqId, status: exit.status, stage, err }, 'request failed');
      return;
    }
    const line = this.fast.lineOf(ok && rpc?.method === CHAIN_ID_METHOD ? 'debug' : 'info', ctx.reqId);
    if (line === null) return;
    const method = rpc === undefined ? undefined : rpc.method;
    if ((method === SEND_METHOD || method === CHAIN_ID_METHOD) && !unanswered) {
      // A method the line names as it is, the status and the key of the microseconds: one piece (request-fields.ts).
      line.jsonAfter(methodStatusUsKey(method, exit.status), micros);
    } else {
      if (method === SEND_METHOD || method === CHAIN_ID_METHOD) line.fields(methodField(method));
      else if (method === undefined) line.str('method', via);
      else line.text('method', method, 64);
      if (!unanswered) line.fields(statusField(exit.status));
      line.json('us', micros);
    }
    if (!ok) {
      line.str('reason', exit.reason).str('stage', stage);
      const detail = exit.detailJson();
      if (detail !== null) line.json('detail', detail);
    }
    // The repeated fields each one piece (request-fields.ts): the text as field by field.
    const tx = ctx.tx;
    if (ctx.chain !== undefined && ctx.account !== undefined) {
      // With the transaction's hash after them: its key in the same piece.
      if (tx !== undefined) line.strAfter(chainAccountFields(ctx.chain.chainId, ctx.account, true), tx.hash);
      else line.fields(chainAccountFields(ctx.chain.chainId, ctx.account));
    } else {
      if (ctx.chain !== undefined) line.fields(chainField(ctx.chain.chainId));
      else if (ctx.account !== undefined) line.fields(accountField(ctx.account));
      if (tx !== undefined) line.str('tx', tx.hash);
    }
    // The client left before its answer (after the forward was sent): the outcome above is
    // real, but nobody received it; support needs to tell the two apart.
    if (unanswered) line.end('closed unanswered');
    else {
      if (ctx.aborted && exit.reason !== 'client_closed') line.json('clientGone', true);
      // The message is the outcome (reasons.ts): accepted, refused, not_sent, uncertain, pending.
      // A query answered (eth_chainId, a transaction's status, a subscription: anything but a
      // send) is a request, not a submission's outcome: "accepted" is a transaction's alone. A
      // status query has a kind of send (the grant reads it) beside the hash it asks for.
      line.end(ok && (ctx.send === undefined || ctx.statusOf !== undefined) ? 'request' : exit.outcome);
    }
  }

  /**
   * A request the front end refused before the pipeline (`status` 0: closed without an answer,
   * which uWS does itself for an invalid Content-Length).
   */
  refused(reqId: string, method: string, path: string, status: number, reason: string, detail: string | undefined): void {
    const line = this.fast.lineOf('info', reqId);
    if (line === null) return;
    line.text('method', method, 16).text('path', path);
    if (status !== 0) line.json('status', status);
    line.str('reason', reason);
    if (detail !== undefined) line.text('detail', detail);
    line.end(status === 0 ? 'closed unanswered' : outcomeOf(reason));
  }

  /** A GET (or HEAD) answer outside the pipeline: GET /tip-addresses (`status` 0: closed unanswered). */
  get(reqId: string, method: string, status: number, reason: string | undefined, account: string | undefined, micros: number): void {
    const line = this.fast.lineOf('info', reqId);
    if (line === null) return;
    line.str('method', method);
    if (status !== 0) line.json('status', status);
    if (reason !== undefined) line.str('reason', reason);
    if (account !== undefined) line.str('account', account);
    line.json('us', micros).end(status === 0 ? 'closed unanswered' : status < 400 ? 'request' : outcomeOf(reason ?? 'internal_error'));
  }
}
