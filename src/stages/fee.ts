/**
 * The fee admission stage (docs/design.md §3.11). A transaction is tipped when it pays at least the grant's
 * minTipWei to one of its tip addresses through an approved pattern:
 * - transfer: `to` is a tip address and `value` ≥ min;
 * - call: `to` is the approved contract, the 4-byte selector matches, the ABI word at
 *   receiverArg holds a tip address (upper 12 bytes zero) and the word at amountArg an amount
 *   ≥ min (calldata too short is not a match).
 * Anything else is 402 fee_rejected, except a plain transfer (empty calldata) when both the
 * account and the deployment allow untipped submissions.
 */
import { reject, type Exit } from '../base/errors.js';
import type { Account, FeePattern, Grant } from '../accounts/types.js';
import type { ChainRuntime } from '../config/chains.js';
import { fieldSetter, type BaseCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';
import type { DecodedTx } from '../tx/types.js';

const setFee = fieldSetter('fee');

export interface FeeVerdict {
  /** The pattern that paid the tip, or 'untipped' for an allowed untipped plain transfer. */
  readonly via: 'transfer' | 'call' | 'untipped';
}

const VIA_TRANSFER: FeeVerdict = Object.freeze({ via: 'transfer' });
const VIA_CALL: FeeVerdict = Object.freeze({ via: 'call' });
const VIA_UNTIPPED: FeeVerdict = Object.freeze({ via: 'untipped' });

function wordIsTipAddress(data: Uint8Array, at: number, tips: { has(a: string): boolean }): boolean {
  for (let i = at; i < at + 12; i++) if (data[i] !== 0) return false;
  return tips.has('0x' + Buffer.from(data.buffer, data.byteOffset + at + 12, 20).toString('hex'));
}

function wordValue(data: Uint8Array, at: number): bigint {
  return BigInt('0x' + Buffer.from(data.buffer, data.byteOffset + at, 32).toString('hex'));
}

/** Which approved pattern pays the tip, if any. */
export function tipVia(tx: DecodedTx, grant: Grant): FeeVerdict | null {
  const patterns = grant.feePatterns;
  // An index, not for…of: no iterator object per submission.
  for (let i = 0; i < patterns.length; i++) {
    const p = patterns[i]!;
    if (p.kind === 'transfer') {
      if (tx.to !== null && tx.value >= grant.minTipWei && grant.tipAddresses.has(tx.to)) return VIA_TRANSFER;
    } else if (tx.to === p.to && callPays(tx.data, p, grant)) return VIA_CALL;
  }
  return null;
}

function callPays(data: Uint8Array, p: Extract<FeePattern, { kind: 'call' }>, grant: Grant): boolean {
  const need = 4 + 32 * (Math.max(p.receiverArg, p.amountArg) + 1);
  if (data.length < need) return false;
  const sel = p.selector;
  for (let i = 0; i < 4; i++) if (data[i] !== parseInt(sel.substr(2 + 2 * i, 2), 16)) return false;
  return wordIsTipAddress(data, 4 + 32 * p.receiverArg, grant.tipAddresses) && wordValue(data, 4 + 32 * p.amountArg) >= grant.minTipWei;
}

export function createFeeStage(deployment: {
  readonly allowUntipped: boolean;
}): Stage<
  BaseCtx & { readonly tx: DecodedTx; readonly grant: Grant; readonly account: Account; readonly chain: ChainRuntime },
  { readonly fee: FeeVerdict },
  'fee'
> {
  const messages = new WeakMap<Grant, Exit>();
  const rejection = (grant: Grant, chainHex: string): Exit => {
    let r = messages.get(grant);
    if (r === undefined) {
      const kinds = [...new Set(grant.feePatterns.map((p) => p.kind))].join(' or ');
      r = reject(
        'fee_rejected',
        `Fee admission rejected: pay at least ${grant.minTipWei} wei to one of this account's tip addresses for chain ${chainHex} ` +
          `(approved patterns: ${kinds}); see GET /tip-addresses`,
      );
      messages.set(grant, r);
    }
    return r;
  };
  return {
    name: 'fee',
    about: 'a tip to a listed address through an approved pattern, or an untipped transfer both allow',
    reasons: ['fee_rejected'],
    adds: 'fee',
    run(ctx) {
      const via = tipVia(ctx.tx, ctx.grant);
      if (via !== null) return setFee(ctx, via);
      const tx = ctx.tx;
      if (tx.to !== null && tx.data.length === 0 && ctx.account.allowUntipped && deployment.allowUntipped) return setFee(ctx, VIA_UNTIPPED);
      return rejection(ctx.grant, ctx.chain.chainIdHex);
    },
  };
}
