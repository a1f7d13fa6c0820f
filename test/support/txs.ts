/** Transactions signed by an independent library (viem), for tests. */
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createPublicClient, encodeFunctionData, http, parseAbi, type Hex } from 'viem';
import { ANVIL_KEYS } from '../../src/dev/anvil.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { intBytes, signFields1559 } from '../../src/dev/sign.js';
import { MIN_TIP, TIP } from './harness.js';

export const SIGNERS = ANVIL_KEYS.map((k) => privateKeyToAccount(k as Hex));

/** An anvil chain as viem names it (chain `id`, the development chain unless said), its RPC at `url`. */
export const anvilChain = (url: string, id = DEV_CHAIN_ID) =>
  ({ id, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } }) as const;

export interface TxIn {
  /** Which of SIGNERS signs (0 by default)... */
  signer?: number;
  /** ...or this account. */
  account?: PrivateKeyAccount;
  chainId?: number;
  nonce?: number;
  to?: Hex | null;
  value?: bigint;
  data?: Hex;
  gas?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
}

/** A tipped EIP-1559 transfer by default. */
export function sign1559(t: TxIn = {}): Promise<Hex> {
  const to = t.to === undefined ? (TIP as Hex) : t.to;
  return (t.account ?? SIGNERS[t.signer ?? 0]!).signTransaction({
    type: 'eip1559',
    chainId: t.chainId ?? DEV_CHAIN_ID,
    nonce: t.nonce ?? 0,
    ...(to !== null ? { to } : {}),
    value: t.value ?? MIN_TIP,
    data: t.data ?? '0x',
    gas: t.gas ?? 21000n + BigInt(((t.data ?? '0x').length - 2) / 2) * 16n + (to === null ? 100_000n : 0n),
    maxFeePerGas: t.maxFeePerGas ?? 3_000_000_000n,
    maxPriorityFeePerGas: t.maxPriorityFeePerGas ?? 1_000_000_000n,
  });
}

/** Fees a local chain (anvil) takes at once. */
export const LOCAL_FEES = { maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n } as const;

/** The next nonce of SIGNERS[signer] on the chain RPC `rpcUrl`, pending transactions counted. */
export const pendingNonce = (rpcUrl: string, signer: number): Promise<number> =>
  createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address: SIGNERS[signer]!.address, blockTag: 'pending' });

/**
 * A transaction by SIGNERS[signer] for the chain whose RPC is `rpcUrl`: a tipped EIP-1559
 * transfer (sign1559's defaults) at the signer's next nonce there (pending ones counted) and with
 * fees a local chain takes at once, each unless `t` says otherwise (`t.nonce` given: the chain
 * is not asked).
 */
export async function signNext(rpcUrl: string, signer: number, t: TxIn = {}): Promise<Hex> {
  const nonce = t.nonce ?? (await pendingNonce(rpcUrl, signer));
  return sign1559({ signer, ...LOCAL_FEES, ...t, nonce });
}

export function signLegacy(t: TxIn & { protected?: boolean } = {}): Promise<Hex> {
  return SIGNERS[t.signer ?? 0]!.signTransaction({
    type: 'legacy',
    ...(t.protected === false ? {} : { chainId: t.chainId ?? DEV_CHAIN_ID }),
    nonce: t.nonce ?? 0,
    to: (t.to ?? TIP) as Hex,
    value: t.value ?? MIN_TIP,
    gas: t.gas ?? 21000n,
    gasPrice: t.maxFeePerGas ?? 3_000_000_000n,
  });
}

export function sign2930(t: TxIn = {}): Promise<Hex> {
  return SIGNERS[t.signer ?? 0]!.signTransaction({
    type: 'eip2930',
    chainId: t.chainId ?? DEV_CHAIN_ID,
    nonce: t.nonce ?? 0,
    to: (t.to ?? TIP) as Hex,
    value: t.value ?? MIN_TIP,
    gas: t.gas ?? 21000n,
    gasPrice: t.maxFeePerGas ?? 3_000_000_000n,
    accessList: [],
  });
}

/** Calldata of `tip(address receiver, uint256 amount)`-like calls: selector + ABI words. */
export const TIP_ABI = parseAbi(['function payTip(address receiver, uint256 amount)', 'function swapAndTip(uint256 minOut, address receiver, uint256 amount)']);
export function tipCall(receiver: Hex, amount: bigint): Hex {
  return encodeFunctionData({ abi: TIP_ABI, functionName: 'payTip', args: [receiver, amount] });
}

/** Signs an arbitrary 9-field 0x02 payload with libsecp256k1 (e.g. maxPriorityFeePerGas > maxFeePerGas, which viem refuses to build). */
export function signRaw1559(fields: Uint8Array[], signer = 0): Hex {
  return signFields1559(fields, ANVIL_KEYS[signer]!);
}

export { intBytes };
