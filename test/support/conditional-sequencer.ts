/**
 * A conditional sequencer for tests: `eth_sendRawTransactionConditional` served by op-geth's
 * rules, in front of a real anvil (which serves no such method), written from these files of
 * github.com/ethereum-optimism/op-geth:
 *
 * - internal/sequencerapi/api.go (SendRawTransactionConditional): the cost first (past
 *   params.TransactionConditionalMaxCost: -32005 "conditional cost, N, exceeded max: 1000"), then
 *   Validate (-32003 "failed conditional validation: …"), then the header check against the
 *   latest block (-32003 "failed header check: …"), then the state check (-32003 "failed state
 *   check: …"), then the transaction submitted;
 * - core/types/transaction_conditional.go: the shapes (a root, or a map of slot → value), Cost
 *   (1 per account, +1 for a root or +1 per slot, +1 for a block range, +1 for a time range) and
 *   Validate (min above max);
 * - core/types/block.go (Header.CheckTransactionConditional): inclusive bounds on the latest
 *   header's number and time;
 * - core/state/statedb.go (StateDB.CheckTransactionConditional): the storage root
 *   (eth_getProof's storageHash here) and each slot (eth_getStorageAt here);
 * - params/conditional_tx_params.go: 1000, -32003, -32005.
 *
 * The special keys of ERC-7796 (`balance`, `nonce`, `code`) are checked against anvil
 * (eth_getBalance, eth_getTransactionCount, eth_getCode), as the ERC writes them.
 *
 * Accepted transactions are published to anvil with eth_sendRawTransaction (so they land);
 * every other method is passed to anvil as it came. Every call that carries a transaction is
 * recorded with its method, so a test sees whether a conditional transaction ever reached the
 * chain as a plain send. Modes make it hold a transaction unpublished, refuse, or not serve the method.
 * `startConditionalChain`: an anvil with some blocks and the sequencer in front of it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Hex, keccak256 } from 'viem';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { freePort } from '../../src/base/free-port.js';

export type SequencerMode =
  /** op-geth's rules, then published to anvil. */
  | 'serve'
  /** The rules, then answered with the hash and never published (a quote that stays out of every block). */
  | 'hold'
  /** -32003 whatever the conditions. */
  | 'refuse'
  /** -32005 whatever the conditions. */
  | 'limit'
  /** The method is not served: -32601 (a sequencer without the conditional API). */
  | 'unserved';

export interface SentCall {
  readonly method: string;
  readonly hash: Hex;
  readonly options?: unknown;
}

export interface ConditionalSequencer {
  readonly url: string;
  mode: SequencerMode;
  /** Every call that carried a transaction, in order: its method and the transaction's hash. */
  readonly calls: SentCall[];
  /** The transactions held unpublished ('hold'). */
  readonly held: Hex[];
  close(): Promise<void>;
}

/** params.TransactionConditionalMaxCost. */
export const MAX_COST = 1000;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

type Known = Record<string, string | Record<string, string>>;

/** TransactionConditional.Cost. */
export function conditionalCost(o: Record<string, unknown>): number {
  let cost = 0;
  for (const v of Object.values((o.knownAccounts ?? {}) as Known)) cost += 1 + (typeof v === 'string' ? 1 : Object.keys(v).length);
  if (o.blockNumberMin != null || o.blockNumberMax != null) cost += 1;
  if (o.timestampMin != null || o.timestampMax != null) cost += 1;
  return cost;
}

/**
 * op-geth's checks of the options (api.go's order: the cost, Validate, the header, the state),
 * against the chain `read` asks; throws the sequencer's JSON-RPC error (RpcError) when one fails.
 */
export async function checkConditions(read: (method: string, params: unknown[]) => Promise<unknown>, o: Record<string, unknown>): Promise<void> {
  const big = (v: unknown) => (v == null ? null : BigInt(v as string));
  const cost = conditionalCost(o);
  if (cost > MAX_COST) throw new RpcError(-32005, `conditional cost, ${cost}, exceeded max: ${MAX_COST}`);
  const [bMin, bMax, tMin, tMax] = [big(o.blockNumberMin), big(o.blockNumberMax), big(o.timestampMin), big(o.timestampMax)];
  if (bMin !== null && bMax !== null && bMin > bMax)
    throw new RpcError(-32003, 'failed conditional validation: block number minimum constraint must be less than the maximum');
  if (tMin !== null && tMax !== null && tMin > tMax)
    throw new RpcError(-32003, 'failed conditional validation: timestamp minimum constraint must be less than the maximum');
  const head = (await read('eth_getBlockByNumber', ['latest', false])) as { number: Hex; timestamp: Hex };
  const [n, t] = [BigInt(head.number), BigInt(head.timestamp)];
  const header = (why: string) => new RpcError(-32003, `failed header check: ${why}`);
  if (bMin !== null && bMin > n) throw header('failed block number minimum constraint');
  if (bMax !== null && bMax < n) throw header('failed block number maximmum constraint');
  if (tMin !== null && tMin > t) throw header('failed timestamp minimum constraint');
  if (tMax !== null && tMax < t) throw header('failed timestamp maximum constraint');
  for (const [addr, want] of Object.entries((o.knownAccounts ?? {}) as Known)) {
    if (typeof want === 'string') {
      const proof = (await read('eth_getProof', [addr, [], 'latest'])) as { storageHash: Hex };
      if (proof.storageHash.toLowerCase() !== want.toLowerCase())
        throw new RpcError(-32003, `failed state check: failed account storage root constraint. Got ${proof.storageHash}, Expected ${want}`);
      continue;
    }
    for (const [key, value] of Object.entries(want)) {
      const got =
        key === 'balance'
          ? BigInt((await read('eth_getBalance', [addr, 'latest'])) as Hex) === BigInt(value)
          : key === 'nonce'
            ? BigInt((await read('eth_getTransactionCount', [addr, 'latest'])) as Hex) === BigInt(value)
            : key === 'code'
              ? ((await read('eth_getCode', [addr, 'latest'])) as string).replace(/^0x$/, '') === value.replace(/^0x$/, '')
              : BigInt((await read('eth_getStorageAt', [addr, key, 'latest'])) as Hex) === BigInt(value);
      if (!got) throw new RpcError(-32003, `failed state check: failed account storage slot key ${key} constraint`);
    }
  }
}

/** One JSON-RPC call to the chain at `url`: its answer as it came. */
const ask = async (url: string, method: string, params: unknown[]): Promise<{ result?: unknown; error?: { code: number; message: string } }> => {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await r.json()) as { result?: unknown; error?: { code: number; message: string } };
};

/** The chain at `url` read for checkConditions: a result, or its error thrown. */
export function chainReader(url: string): (method: string, params: unknown[]) => Promise<unknown> {
  return async (method, params) => {
    const a = await ask(url, method, params);
    if (a.error !== undefined) throw new RpcError(a.error.code, a.error.message);
    return a.result;
  };
}

export async function startConditionalSequencer(anvilUrl: string): Promise<ConditionalSequencer> {
  const anvil = (method: string, params: unknown[]) => ask(anvilUrl, method, params);
  const read = chainReader(anvilUrl);
  const conditional = async (tx: Hex, o: Record<string, unknown>): Promise<unknown> => {
    if (seq.mode === 'limit') throw new RpcError(-32005, `conditional cost, ${MAX_COST + 1}, exceeded max: ${MAX_COST}`);
    if (seq.mode === 'refuse') throw new RpcError(-32003, 'failed state check: failed account storage root constraint');
    await checkConditions(read, o);
    if (seq.mode === 'hold') {
      seq.held.push(tx);
      return keccak256(tx);
    }
    return read('eth_sendRawTransaction', [tx]);
  };

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const answer = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    let id: unknown = null;
    try {
      const msg = JSON.parse(Buffer.concat(chunks).toString()) as { id?: unknown; method: string; params?: unknown[] };
      id = msg.id ?? null;
      const params = msg.params ?? [];
      if (msg.method === 'eth_sendRawTransactionConditional') {
        if (typeof params[0] === 'string') seq.calls.push({ method: msg.method, hash: keccak256(params[0] as Hex), options: params[1] });
        if (seq.mode === 'unserved') throw new RpcError(-32601, 'the method eth_sendRawTransactionConditional does not exist/is not available');
        if (typeof params[0] !== 'string' || typeof params[1] !== 'object' || params[1] === null) throw new RpcError(-32602, 'invalid argument');
        answer({ jsonrpc: '2.0', id, result: await conditional(params[0] as Hex, params[1] as Record<string, unknown>) });
        return;
      }
      if (msg.method === 'eth_sendRawTransaction' && typeof params[0] === 'string') seq.calls.push({ method: msg.method, hash: keccak256(params[0] as Hex) });
      answer({ jsonrpc: '2.0', id, ...(await anvil(msg.method, params)) });
    } catch (e) {
      const code = e instanceof RpcError ? e.code : -32000;
      answer({ jsonrpc: '2.0', id, error: { code, message: (e as Error).message } });
    }
  };
  const server: Server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const seq: ConditionalSequencer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    mode: 'serve',
    calls: [],
    held: [],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return seq;
}

/** An anvil (chain 4663, `extraArgs` as given) with `mined` blocks (so that a blockNumberMax below the head exists), and the sequencer in front of it. */
export async function startConditionalChain(mined = 0, extraArgs?: string[]): Promise<{ anvil: Anvil; seq: ConditionalSequencer }> {
  const anvil = await startAnvil({ port: await freePort(), chainId: 4663, ...(extraArgs !== undefined ? { extraArgs } : {}) });
  const seq = await startConditionalSequencer(anvil.url);
  if (mined > 0) await ask(anvil.url, 'anvil_mine', [`0x${mined.toString(16)}`]);
  return { anvil, seq };
}
