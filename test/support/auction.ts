/**
 * The real Timeboost auction on anvil: `ExpressLaneAuction` from @arbitrum/nitro-contracts (its
 * compiled artifact), behind an ERC1967 proxy (initialize refuses to run on the implementation:
 * onlyDelegated), with the package's TestToken as the bidding token. Rounds are resolved by the
 * auctioneer role (an anvil account) from bids signed per the contract's EIP-712 `Bid`; control
 * is transferred mid-round by the controller itself; time moves with anvil's controls.
 *
 * The chain's clock and the edge's: Nitro's sequencer numbers rounds on its own clock; here the
 * round clock of the code under test (`auction.clock`) is the wall clock shifted to follow the
 * chain's time each time this module moves it, so both say the same round.
 */
import { createRequire } from 'node:module';
import { createPublicClient, createTestClient, createWalletClient, type Hex, http, parseAbi, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_KEYS } from '../../src/dev/anvil.js';

const require = createRequire(import.meta.url);
const ART = '@arbitrum/nitro-contracts/build/contracts';
interface Artifact {
  readonly abi: readonly unknown[];
  readonly bytecode: Hex;
}
const artifact = (p: string): Artifact => require(`${ART}/${p}`) as Artifact;
export const AUCTION_ARTIFACT = artifact('src/express-lane-auction/ExpressLaneAuction.sol/ExpressLaneAuction.json');
const TOKEN = artifact('src/test-helpers/TestToken.sol/TestToken.json');
const PROXY = artifact('@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol/ERC1967Proxy.json');

export const AUCTION_ABI = parseAbi([
  'struct RoundTimingInfo { int64 offsetTimestamp; uint64 roundDurationSeconds; uint64 auctionClosingSeconds; uint64 reserveSubmissionSeconds; }',
  'struct InitArgs { address _auctioneer; address _biddingToken; address _beneficiary; RoundTimingInfo _roundTimingInfo; uint256 _minReservePrice; address _auctioneerAdmin; address _minReservePriceSetter; address _reservePriceSetter; address _reservePriceSetterAdmin; address _beneficiarySetter; address _roundTimingSetter; address _masterAdmin; }',
  'struct Bid { address expressLaneController; uint256 amount; bytes signature; }',
  'struct ELCRound { address expressLaneController; uint64 round; }',
  'function initialize(InitArgs args)',
  'function deposit(uint256 amount)',
  'function resolveSingleBidAuction(Bid firstPriceBid)',
  'function resolveMultiBidAuction(Bid firstPriceBid, Bid secondPriceBid)',
  'function transferExpressLaneController(uint64 round, address newExpressLaneController)',
  'function setTransferor((address addr, uint64 fixedUntilRound) transferor)',
  'function setRoundTimingInfo(RoundTimingInfo newRoundTimingInfo)',
  'function roundTimingInfo() view returns (int64 offsetTimestamp, uint64 roundDurationSeconds, uint64 auctionClosingSeconds, uint64 reserveSubmissionSeconds)',
  'function resolvedRounds() view returns (ELCRound, ELCRound)',
  'function currentRound() view returns (uint64)',
]);
const TOKEN_ABI = parseAbi([
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transfer(address to, uint256 amount) returns (bool)',
]);

/** Who is who: anvil's accounts. */
export const ADMIN = privateKeyToAccount(ANVIL_KEYS[0] as Hex);
export const AUCTIONEER = privateKeyToAccount(ANVIL_KEYS[1] as Hex);
/** Two bidders (they deposit and sign bids); the controllers they name are any keys. */
export const BIDDERS = [privateKeyToAccount(ANVIL_KEYS[2] as Hex), privateKeyToAccount(ANVIL_KEYS[3] as Hex)] as const;

export interface Timing {
  readonly durationSeconds: number;
  readonly closingSeconds: number;
  readonly reserveSubmissionSeconds: number;
}

export interface Auction {
  readonly address: Hex;
  readonly chainId: number;
  readonly timing: Timing & { readonly offsetSeconds: number };
  readonly pub: PublicClient;
  /** The round clock of the code under test: ms since the epoch, following the chain's time. */
  clock(): number;
  /** The round the chain is in now (the contract's currentRound()). */
  currentRound(): Promise<number>;
  /** Seconds into the current round, by the chain's latest block. */
  secondsIntoRound(): Promise<number>;
  /** Moves the chain (and the clock) to `secondsIn` seconds into the round `rounds` ahead of the current one (0: this round, later in it). */
  moveTo(rounds: number, secondsIn: number): Promise<void>;
  /**
   * Resolves the auction for the next round with `controller` as its winner: moves into the
   * current round's closing window, and resolves (single bid by BIDDERS[0], or a second-price
   * auction against BIDDERS[1] when `multi`). Returns the round sold.
   */
  sellNextRound(controller: Hex, multi?: boolean): Promise<number>;
  /** `from` (the round's controller, a key) hands `round` to `to`. */
  transfer(fromKey: Hex, round: number, to: Hex): Promise<void>;
  /** Sets a new round clock (the ROUND_TIMING_SETTER_ROLE is ADMIN's). */
  setTiming(t: Timing & { offsetSeconds: number }): Promise<void>;
}

/** Deploys the token, the auction and its proxy on the anvil at `url`, initialised, the bidders funded and deposited. */
export async function deployAuction(
  url: string,
  chainId: number,
  timing: Timing = { durationSeconds: 60, closingSeconds: 15, reserveSubmissionSeconds: 15 },
): Promise<Auction> {
  const chain = { id: chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } } as const;
  const transport = http(url);
  const pub = createPublicClient({ chain, transport }) as PublicClient;
  const test = createTestClient({ chain, transport, mode: 'anvil' });
  const wallet = (key: Hex) => createWalletClient({ chain, transport, account: privateKeyToAccount(key) });
  const admin = wallet(ANVIL_KEYS[0] as Hex);
  const mined = async (hash: Hex) => {
    const r = await pub.waitForTransactionReceipt({ hash });
    if (r.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return r;
  };
  const deploy = async (a: Artifact, args: unknown[]): Promise<Hex> => {
    const r = await mined(await admin.deployContract({ abi: a.abi, bytecode: a.bytecode, args } as Parameters<typeof admin.deployContract>[0]));
    if (r.contractAddress == null) throw new Error('no contract deployed');
    return r.contractAddress;
  };
  const token = await deploy(TOKEN, [10n ** 30n]);
  const impl = await deploy(AUCTION_ARTIFACT, []);
  const block = await pub.getBlock();
  // Round 0 starts at the chain's latest timestamp, rounded down to a whole minute.
  const offsetSeconds = Number(block.timestamp) - (Number(block.timestamp) % 60);
  const { encodeFunctionData } = await import('viem');
  const init = encodeFunctionData({
    abi: AUCTION_ABI,
    functionName: 'initialize',
    args: [
      {
        _auctioneer: AUCTIONEER.address,
        _biddingToken: token,
        _beneficiary: ADMIN.address,
        _roundTimingInfo: {
          offsetTimestamp: BigInt(offsetSeconds),
          roundDurationSeconds: BigInt(timing.durationSeconds),
          auctionClosingSeconds: BigInt(timing.closingSeconds),
          reserveSubmissionSeconds: BigInt(timing.reserveSubmissionSeconds),
        },
        _minReservePrice: 1000n,
        _auctioneerAdmin: ADMIN.address,
        _minReservePriceSetter: ADMIN.address,
        _reservePriceSetter: ADMIN.address,
        _reservePriceSetterAdmin: ADMIN.address,
        _beneficiarySetter: ADMIN.address,
        _roundTimingSetter: ADMIN.address,
        _masterAdmin: ADMIN.address,
      },
    ],
  });
  const address = await deploy(PROXY, [impl, init]);
  for (const b of BIDDERS) {
    await mined(await admin.writeContract({ address: token, abi: TOKEN_ABI, functionName: 'transfer', args: [b.address, 10n ** 24n] }));
    const w = wallet(ANVIL_KEYS[BIDDERS.indexOf(b) + 2] as Hex);
    await mined(await w.writeContract({ address: token, abi: TOKEN_ABI, functionName: 'approve', args: [address, 10n ** 24n] }));
    await mined(await w.writeContract({ address, abi: AUCTION_ABI, functionName: 'deposit', args: [10n ** 22n] }));
  }

  let shiftMs = 0;
  let current = { offsetSeconds, ...timing };
  const chainNow = async (): Promise<number> => Number((await pub.getBlock()).timestamp);
  const follow = async (): Promise<void> => {
    // The chain's time at its latest block, as of now: the clock follows it (within a second).
    shiftMs = (await chainNow()) * 1000 + 500 - Date.now();
  };
  await follow();
  const a: Auction = {
    address,
    chainId,
    get timing() {
      return current;
    },
    pub,
    clock: () => Date.now() + shiftMs,
    async currentRound() {
      return Number(await pub.readContract({ address, abi: AUCTION_ABI, functionName: 'currentRound' }));
    },
    async secondsIntoRound() {
      return ((await chainNow()) - current.offsetSeconds) % current.durationSeconds;
    },
    async moveTo(rounds, secondsIn) {
      const now = await chainNow();
      const round = Math.floor((now - current.offsetSeconds) / current.durationSeconds);
      const target = current.offsetSeconds + (round + rounds) * current.durationSeconds + secondsIn;
      if (target <= now) throw new Error(`moveTo: ${target} is not after the chain's time ${now}`);
      await test.setNextBlockTimestamp({ timestamp: BigInt(target) });
      await test.mine({ blocks: 1 });
      await follow();
    },
    async sellNextRound(controller, multi = false) {
      const into = await a.secondsIntoRound();
      const closing = current.durationSeconds - current.closingSeconds;
      if (into < closing + 1) await a.moveTo(0, closing + 2);
      const round = (await a.currentRound()) + 1;
      const domain = { name: 'ExpressLaneAuction', version: '1', chainId, verifyingContract: address } as const;
      const types = {
        Bid: [
          { name: 'round', type: 'uint64' },
          { name: 'expressLaneController', type: 'address' },
          { name: 'amount', type: 'uint256' },
        ],
      } as const;
      const bid = async (i: 0 | 1, amount: bigint) => ({
        expressLaneController: controller,
        amount,
        signature: await BIDDERS[i].signTypedData({
          domain,
          types,
          primaryType: 'Bid',
          message: { round: BigInt(round), expressLaneController: controller, amount },
        }),
      });
      const auctioneer = wallet(ANVIL_KEYS[1] as Hex);
      const hash = multi
        ? await auctioneer.writeContract({
            address,
            abi: AUCTION_ABI,
            functionName: 'resolveMultiBidAuction',
            args: [await bid(0, 5000n), await bid(1, 3000n)],
          })
        : await auctioneer.writeContract({ address, abi: AUCTION_ABI, functionName: 'resolveSingleBidAuction', args: [await bid(0, 5000n)] });
      await mined(hash);
      await follow();
      return round;
    },
    async transfer(fromKey, round, to) {
      await mined(await wallet(fromKey).writeContract({ address, abi: AUCTION_ABI, functionName: 'transferExpressLaneController', args: [BigInt(round), to] }));
      await follow();
    },
    async setTiming(t) {
      await mined(
        await admin.writeContract({
          address,
          abi: AUCTION_ABI,
          functionName: 'setRoundTimingInfo',
          args: [
            {
              offsetTimestamp: BigInt(t.offsetSeconds),
              roundDurationSeconds: BigInt(t.durationSeconds),
              auctionClosingSeconds: BigInt(t.closingSeconds),
              reserveSubmissionSeconds: BigInt(t.reserveSubmissionSeconds),
            },
          ],
        }),
      );
      current = { ...t };
      await follow();
    },
  };
  return a;
}
