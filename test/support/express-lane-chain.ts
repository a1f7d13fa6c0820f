/**
 * The express lane's chain for the tests that run it end to end: anvil with the real auction
 * (support/express-lane.ts) and a lane endpoint applying Nitro's rules
 * (support/express-lane-endpoint.ts), the controller keys, and the transactions sent through the
 * lane with the questions asked of them (landed, known to the chain).
 */
import { type Hex, keccak256 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_KEYS, type Anvil, startAnvil } from '../../src/dev/anvil.js';
import { type Auction, deployAuction } from './auction.js';
import { type Endpoint, startEndpoint } from './express-lane-endpoint.js';
import { freePort } from '../../src/base/free-port.js';
import { sign1559, SIGNERS } from './txs.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

/** The edge's controller key, and a rival's. */
export const OURS_KEY = ANVIL_KEYS[4] as Hex;
export const THEIRS_KEY = ANVIL_KEYS[5] as Hex;
export const OURS = privateKeyToAccount(OURS_KEY).address.toLowerCase() as Hex;
export const THEIRS = privateKeyToAccount(THEIRS_KEY).address.toLowerCase() as Hex;
/** The sender (a SIGNERS index) of the transactions sent through the lane. */
export const SENDER = 6;

export interface LaneChain {
  readonly anvil: Anvil;
  readonly auction: Auction;
  readonly endpoint: Endpoint;
}

/** Starts anvil (the development chain), deploys the auction and starts the lane endpoint in front of it. */
export async function startLaneChain(): Promise<LaneChain> {
  const anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
  const auction = await deployAuction(anvil.url, DEV_CHAIN_ID);
  return { anvil, auction, endpoint: await startEndpoint(auction, anvil.url) };
}

/** A transfer by SIGNERS[signer] (SENDER by default) at its next nonce on the auction's chain (pending ones counted). */
export async function nextLaneTx(auction: Auction, signer = SENDER): Promise<Hex> {
  const nonce = await auction.pub.getTransactionCount({ address: SIGNERS[signer]!.address, blockTag: 'pending' });
  return sign1559({ signer, nonce, chainId: DEV_CHAIN_ID });
}

/** Mined and successful (waits for the receipt: anvil mines just after it answers). */
export async function landedOn(auction: Auction, raw: Hex): Promise<boolean> {
  try {
    return (await auction.pub.waitForTransactionReceipt({ hash: keccak256(raw), timeout: 10_000, pollingInterval: 50 })).status === 'success';
  } catch {
    return false;
  }
}

/** Known to the chain at all (pool or block): the bytes were handed to it. */
export async function knownTo(auction: Auction, raw: Hex): Promise<boolean> {
  return (await auction.pub.request({ method: 'eth_getTransactionByHash', params: [keccak256(raw)] } as never)) !== null;
}
