/**
 * The forward stage: hands the original signed hex to the chain's forwarder, which answers with
 * the sequencer's acceptance (the hash) or an unambiguous failure (see forward/forwarder.ts).
 */
import type { ChainForwarder } from '../forward/forwarder.js';
import type { Account } from '../accounts/types.js';
import type { ChainRuntime } from '../config/chains.js';
import type { BaseCtx } from '../pipeline/context.js';
import type { DecodedTx } from '../tx/types.js';
import type { RawTxParam } from './route.js';
import type { TerminalStage } from '../pipeline/pipeline.js';
import type { Send } from '../rpc/send-kind.js';
import type { Exit } from '../base/errors.js';
import type { ForwardRequest } from '../forward/parts.js';
import type { Conditions } from '../conditional/options.js';

/** A chain's conditional send (forward/conditional-send.ts's ConditionalSend, built beside the forwarder in the composition root). */
export interface ConditionalSendOf {
  send(req: ForwardRequest, c: Conditions): Exit | PromiseLike<Exit>;
}

/** A chain's sync send (sync/sync-send.ts's SyncSender, built beside the forwarder in the composition root). */
export interface SyncSend {
  /** `sealed`: the sealed block's receipt, not the preconfirmation's (a chain with flashblocks). */
  send(req: ForwardRequest, waitMs: number, sealed?: boolean): Exit | PromiseLike<Exit>;
}

export function createForwardStage(
  forwarders: ReadonlyMap<number, ChainForwarder>,
  /** eth_sendRawTransactionSync, for the chains that turn it on. */
  syncSenders: ReadonlyMap<number, SyncSend> = new Map(),
  /** eth_sendRawTransactionConditional, for the chains that turn it on. */
  conditionalSenders: ReadonlyMap<number, ConditionalSendOf> = new Map(),
): TerminalStage<
  BaseCtx & {
    readonly send: Send;
    readonly rawTx: RawTxParam;
    readonly chain: ChainRuntime;
    readonly tx: DecodedTx;
    readonly account: Account;
    readonly sender: string | null;
    readonly conditions: Conditions | undefined;
  },
  'forward'
> {
  return {
    name: 'forward',
    about: "hands the signed bytes to the chain's sequencers and answers with their verdict",
    reasons: ['ok', 'upstream_rejected', 'upstream_error', 'upstream_unavailable', 'overloaded', 'sync_timeout'],
    run(ctx) {
      const raw = ctx.rawTx as string; // decode passed: a validated 0x-hex string
      const forwarder = forwarders.get(ctx.chain.chainId)!;
      const req = {
        hash: ctx.tx.hash,
        rawHex: raw.charCodeAt(1) === 120 ? raw : '0x' + raw.slice(2),
        account: ctx.account.id,
        reqId: ctx.reqId,
        sender: ctx.sender,
        t0: ctx.t0,
        granted: ctx.account,
      };
      // The route stage says sync only where the chain enables it (so its sender exists).
      const send = ctx.send;
      if (send.kind === 'sync') return syncSenders.get(ctx.chain.chainId)!.send(req, send.waitMs, send.sealed === true);
      // Conditional only where the chain enables it (the route stage), its conditions read (the conditions stage).
      if (send.kind === 'conditional') return conditionalSenders.get(ctx.chain.chainId)!.send(req, ctx.conditions!);
      return forwarder.forward(req);
    },
  };
}
