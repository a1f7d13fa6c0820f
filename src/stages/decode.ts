/**
 * The decode/verify stage: turns the param into a verified transaction (hash computed once,
 * here) or names precisely why not: solana_transaction, unsigned_transaction,
 * replay_unprotected, unsupported_tx_type, chain_mismatch, invalid_signature,
 * invalid_transaction (docs/design.md §3.10). One decoder (one Common) per chain, built at start-up.
 */
import { Exit, REJECT } from '../base/errors.js';
import { BAD_SEND_PARAMS, type RawTxParam } from './route.js';
import type { Grant } from '../accounts/types.js';
import type { ChainRuntime } from '../config/chains.js';
import { fieldSetter, type BaseCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';
import type { TxDecoder } from '../tx/decoder.js';
import { isSolanaText } from '../tx/solana.js';
import type { DecodedTx } from '../tx/types.js';

const setTx = fieldSetter('tx');

export function createDecodeStage(
  decoders: ReadonlyMap<number, TxDecoder>,
): Stage<BaseCtx & { readonly rawTx: RawTxParam; readonly chain: ChainRuntime; readonly grant: Grant }, { readonly tx: DecodedTx }, 'decode'> {
  return {
    name: 'decode',
    about: 'the signed transaction decoded and its signature checked; its hash computed once, here',
    reasons: [
      'invalid_params',
      'solana_transaction',
      'unsigned_transaction',
      'replay_unprotected',
      'unsupported_tx_type',
      'chain_mismatch',
      'invalid_signature',
      'invalid_transaction',
    ],
    adds: 'tx',
    run(ctx) {
      const raw = ctx.rawTx;
      // An eth_sendTransaction-style object: the client expected us to sign it.
      if (typeof raw !== 'string') return REJECT.unsigned_transaction;
      if (raw.charCodeAt(0) !== 48 /* 0 */) return isSolanaText(raw) ? REJECT.solana_transaction : BAD_SEND_PARAMS;
      const decoder = decoders.get(ctx.chain.chainId)!;
      const out = decoder.decode(Buffer.from(raw.substring(2), 'hex'), ctx.grant);
      return out instanceof Exit ? out : setTx(ctx, out);
    },
  };
}
