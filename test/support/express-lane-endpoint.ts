/**
 * An express lane endpoint for tests: `timeboost_sendExpressLaneTransaction` served by Nitro's
 * rules (github.com/OffchainLabs/nitro: timeboost/express_lane_tracker.go ValidateExpressLaneTx,
 * timeboost/express_lane_service.go SequenceExpressLaneSubmission, timeboost/errors.go's words),
 * with the round's controller read from the same auction contract (resolvedRounds()) and the
 * signature recovered by an implementation of its own (viem's recoverMessageAddress over the
 * message bytes it rebuilds from the fields: it does not use src/). Accepted transactions go to
 * anvil (eth_sendRawTransaction), so they land on the chain. Fault switches make it lie.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { concat, type Hex, keccak256, pad, recoverMessageAddress, toHex } from 'viem';
import type { LaneReading } from '../../src/express-lane/answer.js';
import type { LaneSubmission } from '../../src/express-lane/lane.js';
import { readLaneUpstream } from '../../src/forward/express-send.js';
import type { Upstream } from '../../src/upstreams/upstream.js';
import type { Auction } from './auction.js';
import { AUCTION_ABI } from './auction.js';
import { chainReader } from '../../src/dev/conditional-sequencer/server.js';
import { checkConditions } from '../../src/dev/conditional-sequencer/rules.js';

export type EndpointFault =
  | 'none'
  /** BAD_ROUND_NUMBER whatever the round. */
  | 'wrong-round'
  /** NOT_EXPRESS_LANE_CONTROLLER whatever the signer. */
  | 'lost-control'
  /** Takes the transaction to the chain, then never answers. */
  | 'timeout-after-read'
  /** Answers null, and drops the transaction (never sequenced). */
  | 'null-then-nothing'
  /** Answers bytes that are not JSON. */
  | 'garbage';

export interface Endpoint {
  readonly url: string;
  fault: EndpointFault;
  /** Every submission received, and every transaction handed to the chain. */
  readonly received: { round: number; seq: bigint; signer: string | null; options: unknown }[];
  readonly published: Hex[];
  /** Taken with `options` whose conditions did not hold (op-geth's checks, conditional-sequencer.ts): answered null, never published, as a queue that drops them. */
  readonly dropped: Hex[];
  close(): Promise<void>;
}

const DONT_CARE = (1n << 64n) - 1n;
/** timeboost/config.go's default max-future-sequence-distance. */
const MAX_FUTURE = 1000n;
const HEX_U64 = /^0x(?:0|[1-9a-f][0-9a-f]{0,15})$/;
const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})*$/;

class NitroError extends Error {}

export async function startEndpoint(auction: Auction, anvilUrl: string, maxFuture = MAX_FUTURE): Promise<Endpoint> {
  const rounds = new Map<number, { sequence: bigint; bySeq: Map<bigint, { sig: string; tx: Hex }> }>();
  const hanging = new Set<ServerResponse>();
  const publish = async (tx: Hex): Promise<void> => {
    const r = await fetch(anvilUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [tx] }),
    });
    const j = (await r.json()) as { result?: Hex; error?: { message: string } };
    if (j.error !== undefined) throw new NitroError(j.error.message);
    ep.published.push(j.result!);
  };
  const controllerOf = async (round: number): Promise<string | null> => {
    const [a, b] = await auction.pub.readContract({ address: auction.address, abi: AUCTION_ABI, functionName: 'resolvedRounds' });
    const hit = [a, b].find((r) => Number(r.round) === round);
    return hit === undefined ? null : hit.expressLaneController.toLowerCase();
  };
  const currentRound = (): number => {
    const t = auction.timing;
    return Math.max(0, Math.floor((auction.clock() - t.offsetSeconds * 1000) / (t.durationSeconds * 1000)));
  };

  const handle = async (p: Record<string, unknown>): Promise<null> => {
    for (const k of ['chainId', 'round', 'auctionContractAddress', 'transaction', 'sequenceNumber', 'signature'])
      if (typeof p[k] !== 'string') throw new NitroError('MALFORMED_DATA');
    const round = p.round as string;
    const seqHex = p.sequenceNumber as string;
    const tx = p.transaction as Hex;
    const sig = p.signature as Hex;
    if (!HEX_U64.test(round) || !HEX_U64.test(seqHex) || !HEX_BYTES.test(tx) || !/^0x[0-9a-fA-F]{130}$/.test(sig)) throw new NitroError('MALFORMED_DATA');
    if (BigInt(p.chainId as string) !== BigInt(auction.chainId))
      throw new NitroError(`express lane tx chain ID ${BigInt(p.chainId as string)} does not match current chain ID ${auction.chainId}: WRONG_CHAIN_ID`);
    if ((p.auctionContractAddress as string).toLowerCase() !== auction.address.toLowerCase())
      throw new NitroError(
        `msg auction contract address ${p.auctionContractAddress as string} does not match sequencer auction contract address ${auction.address}: WRONG_AUCTION_CONTRACT`,
      );
    const r = Number(BigInt(round));
    const seq = BigInt(seqHex);
    const current = currentRound();
    if (ep.fault === 'wrong-round' || r !== current)
      throw new NitroError(`express lane tx round ${r} does not match current round ${current}: BAD_ROUND_NUMBER`);
    const controller = await controllerOf(r);
    if (controller === null)
      throw new NitroError(`no on-chain controller for round ${r} (current round ${current}, ValidateExpressLaneTx): NO_ONCHAIN_CONTROLLER`);
    // ToMessageBytes (timeboost/types.go), rebuilt here from the fields.
    const message = concat([
      keccak256(toHex('TIMEBOOST_BID')),
      pad(toHex(BigInt(p.chainId as string)), { size: 32 }),
      p.auctionContractAddress as Hex,
      pad(toHex(BigInt(round)), { size: 8 }),
      pad(toHex(seq), { size: 8 }),
      tx,
    ]);
    const signer = (await recoverMessageAddress({ message: { raw: message }, signature: sig })).toLowerCase();
    const options = p.options ?? null;
    ep.received.push({ round: r, seq, signer, options });
    if (ep.fault === 'lost-control' || signer !== controller) throw new NitroError('NOT_EXPRESS_LANE_CONTROLLER');
    if (ep.fault === 'null-then-nothing') return null;
    if (options !== null) {
      // The conditions (`options`, ConditionalOptions) checked against the chain before the transaction is published.
      const unmet = await checkConditions(chainReader(anvilUrl), options as Record<string, unknown>).then(
        () => false,
        () => true,
      );
      if (unmet) {
        ep.dropped.push(tx);
        return null;
      }
    }
    if (seq === DONT_CARE) {
      await publish(tx);
      return null;
    }
    let info = rounds.get(r);
    if (info === undefined) rounds.set(r, (info = { sequence: 0n, bySeq: new Map() }));
    const prev = info.bySeq.get(seq);
    if (seq < info.sequence) {
      if (prev !== undefined && prev.sig === sig) return null;
      throw new NitroError('SEQUENCE_NUMBER_TOO_LOW');
    }
    if (prev !== undefined) {
      if (prev.sig === sig) return null;
      throw new NitroError('SEQUENCE_NUMBER_ALREADY_SEEN');
    }
    if (seq > info.sequence + maxFuture)
      throw new NitroError(
        `message sequence number has reached max allowed limit. SequenceNumber: ${seq}, ExpectedSequenceNumber: ${info.sequence}, Limit: ${info.sequence + maxFuture}`,
      );
    info.bySeq.set(seq, { sig, tx });
    let err: Error | undefined;
    while (currentRound() === r) {
      const next = info.bySeq.get(info.sequence);
      if (next === undefined) break;
      try {
        await publish(next.tx);
      } catch (e) {
        if (info.sequence === seq) err = e as Error;
      }
      info.sequence++;
    }
    if (err !== undefined) throw err;
    return null;
  };

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let id: unknown = null;
    const answer = (body: string) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    };
    try {
      const msg = JSON.parse(Buffer.concat(chunks).toString()) as { id?: unknown; method?: unknown; params?: unknown };
      id = msg.id ?? null;
      if (msg.method !== 'timeboost_sendExpressLaneTransaction') {
        answer(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: `the method ${String(msg.method)} does not exist/is not available` } }));
        return;
      }
      const p = Array.isArray(msg.params) ? (msg.params[0] as unknown) : undefined;
      if (typeof p !== 'object' || p === null) throw new NitroError('missing required parameter');
      if (ep.fault === 'garbage') {
        answer('<html>502 bad gateway');
        return;
      }
      if (ep.fault === 'timeout-after-read') {
        await publish((p as { transaction: Hex }).transaction);
        hanging.add(res);
        return;
      }
      answer(JSON.stringify({ jsonrpc: '2.0', id, result: await handle(p as Record<string, unknown>) }));
    } catch (e) {
      answer(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: (e as Error).message } }));
    }
  };
  const server: Server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const ep: Endpoint = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fault: 'none',
    received: [],
    published: [],
    dropped: [],
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return ep;
}

/**
 * Sends `sub` to the endpoint as the forward does (forward/express-send.ts: through the endpoint's
 * upstream, the answer read by `readLaneUpstream`) and releases it with what the answer meant.
 */
export async function sendToEndpoint(endpoint: Upstream, sub: LaneSubmission, timeoutMs: number): Promise<LaneReading> {
  const reading = readLaneUpstream(await endpoint.call(sub.method, sub.paramsJson, { timeoutMs, queueMs: timeoutMs }));
  sub.release(reading);
  return reading;
}
