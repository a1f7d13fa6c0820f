/** Bench fixtures: a configuration, accounts, signed transactions and contexts, built once. */
import { parseAccounts } from '../../src/accounts/parse.js';
import type { AccountStore } from '../../src/accounts/types.js';
import { admissionStages, type Admitted } from '../../src/stages/list.js';
import { buildChains } from '../../src/config/chains.js';
import { parseConfig } from '../../src/config/config.js';
import { ANVIL_KEYS, ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { result } from '../../src/base/errors.js';
import { RateLimiter } from '../../src/limits/rate-limiter.js';
import { initCrypto, keccak256 } from '../../src/base/native.js';
import { RequestContext, type Body, type BodyResult, type FieldInitializer, type RequestHead } from '../../src/pipeline/context.js';
import { Later } from '../../src/pipeline/later.js';
import type { PipelineHooks, TerminalStage } from '../../src/pipeline/pipeline.js';
import { HostTable } from '../../src/config/chains.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { TxDecoder } from '../../src/tx/decoder.js';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';

await initCrypto();

export const KEY = 'txg_bench_key_000000000000000000000000000000000';
export const KEY_OFF = 'txg_bench_key_disabled_000000000000000000000000';
export const KEY_SLOW = 'txg_bench_key_limited_0000000000000000000000000';

export const config = parseConfig(
  { chains: [{ chainId: 4663, hosts: ['localhost', 'fast.chain-a.example'], sequencers: ['http://127.0.0.1:9'] }], workers: 1 },
  '/',
  {},
);
export const chains = buildChains(config);
export const hosts = new HostTable(chains);
const grant = (rate: { perSecond: number; burst: number }) => ({
  chainId: 4663,
  rateLimit: rate,
  txTypes: [2],
  tipAddresses: [ANVIL_TIP_ADDRESS],
  minTipWei: '1000000000000',
});
/** The bench's accounts, as the file (or a database row each) holds them. */
export const ACCOUNT_DOCS = [
  { id: 'mm', keySha256: [keySha256(KEY)], grants: [grant({ perSecond: 1e6, burst: 1e6 })] },
  { id: 'off', keySha256: [keySha256(KEY_OFF)], submissionEnabled: false, grants: [] },
  { id: 'slow', keySha256: [keySha256(KEY_SLOW)], grants: [grant({ perSecond: 1e-6, burst: 1 })] },
];
const snapshot = parseAccounts({ accounts: ACCOUNT_DOCS });
export const store: AccountStore = { ready: true, stale: false, size: 3, byKeyHash: (h) => snapshot.byHash.get(h), start: async () => {}, close: () => {} };
/** The default configuration's decoder (crypto.signature = "curve"). */
export const decoders = new Map([[4663, new TxDecoder(4663, 'prague', { signature: config.crypto.signature })]]);
export const referenceDecoders = new Map([[4663, new TxDecoder(4663, 'prague', { lean: false })]]);
/** crypto.signature = "recover": every sender recovered. */
export const recoverDecoders = new Map([[4663, new TxDecoder(4663, 'prague', { signature: 'recover' })]]);
export const limiter = new RateLimiter();

/** A pool of distinct signed transactions (tipped EIP-1559 transfers) from several signers. */
export async function signedPool(n: number, opts: { value?: bigint; to?: Hex } = {}): Promise<Hex[]> {
  const signers = ANVIL_KEYS.map((k) => privateKeyToAccount(k as Hex));
  const out: Hex[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      await signers[i % signers.length]!.signTransaction({
        type: 'eip1559',
        chainId: 4663,
        nonce: Math.floor(i / signers.length),
        to: opts.to ?? (ANVIL_TIP_ADDRESS as Hex),
        value: opts.value ?? 1_000_000_000_000n,
        gas: 21000n,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      }),
    );
  }
  return out;
}

export const TXS = await signedPool(64);
export const BYTES = TXS.map((t) => Buffer.from(t.slice(2), 'hex'));

export function body(method: string, params: unknown[]): Body {
  const text = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  return { text, bytes: Buffer.byteLength(text) };
}

export function head(o: Partial<RequestHead> = {}): RequestHead {
  return { host: 'localhost:8080', json: true, declaredBytes: 300, apiKey: KEY, ...o };
}

/** A fresh context whose body is already there (the read is settled: the pipeline runs through at once, as in the server). */
export function context(h: RequestHead, b: Body, init?: FieldInitializer): RequestContext {
  const source = {
    read: () => {
      const l = new Later<BodyResult>();
      l.settle(b);
      return l;
    },
  };
  return new RequestContext('b', 0, h, source, init);
}

/** The service's stages with a forward that answers at once (the sequencer is out of the picture). */
export function pipeline(hooks: PipelineHooks, decs: ReadonlyMap<number, TxDecoder> = decoders) {
  const instantForward: TerminalStage<Admitted> = { name: 'forward', reasons: ['ok'], run: (ctx) => result(ctx.tx.hash) };
  return admissionStages({ config, hosts, store, decoders: decs, limiter }).end(instantForward, hooks);
}

export function hashOf(b: Uint8Array): Uint8Array {
  return keccak256(b);
}
