/**
 * `npm run demo`: the client flow of the interface (§1 steps 1–5) against `npm start`, with the
 * client kit (txgate-client): eth_chainId checked on connect; nonce, gas and fees from the chain
 * RPC; an EIP-1559 transaction paying the tip, signed locally; submitted with X-Api-Key and
 * settled to a definite outcome; the receipt polled on the chain RPC with bounded backoff.
 */
import { readCommandLine } from '../src/cli-args.js';
import { createPublicClient, http, parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { connectTxgate, TxgateError } from '../packages/client/src/index.js';
import { ANVIL_KEYS } from '../src/dev/anvil.js';
import { DEV_API_KEY } from '../src/dev/dev-setup.js';

const HELP = `npm run demo [-- options]: the client flow against a running txgate (npm start)

  --url URL        txgate's base URL (default $TXGATE_URL or http://127.0.0.1:8080); ws://… uses
                   the WebSocket transport (npm start -- --websocket)
  --sync           one eth_sendRawTransactionSync: the receipt in the answer (npm start -- --sync)
  --track          then the edge's status of the transaction: txgate_getTransactionStatus
                   (npm start -- --track)
  --conditional    one eth_sendRawTransactionConditional (ERC-7796) with conditions that hold:
                   block and time bounds around the head, the tip address's storage root and a
                   slot of the sender, read from the chain RPC (npm start -- --conditional)
  --unmet          with --conditional: a slot condition that does not hold instead; the sequencer
                   refuses it -32003 (exit 0 when refused so, 1 when anything else answers)
  --rpc URL        the chain's own RPC: nonce, gas, fees, receipts (default $CHAIN_RPC_URL or http://127.0.0.1:8545)
  --chain-id N     the chain id txgate must answer (default 4663)
  -h, --help       this help

The API key is $TXGATE_API_KEY, or npm start's development key. It signs with anvil's funded
test key #0, pays the tip from GET /tip-addresses, submits, and prints the hash and the
receipt status. Exit 0 executed, 1 refused or not reachable, 2 a bad option or value, 3 reverted,
4 no receipt in time.`;

function fail(message: string, code = 1): never {
  process.stderr.write(`demo: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(code);
}

/** Bad input: one line, exit 2 (docs/operations.md "Exit status"). */
function usage(message: string): never {
  fail(message, 2);
}

let values: { url: string; rpc: string; 'chain-id': string; help: boolean; sync: boolean; track: boolean; conditional: boolean; unmet: boolean };
try {
  ({ values } = readCommandLine({
    url: { type: 'string', default: process.env.TXGATE_URL ?? 'http://127.0.0.1:8080' },
    rpc: { type: 'string', default: process.env.CHAIN_RPC_URL ?? 'http://127.0.0.1:8545' },
    'chain-id': { type: 'string', default: '4663' },
    help: { type: 'boolean', short: 'h', default: false },
    sync: { type: 'boolean', default: false },
    track: { type: 'boolean', default: false },
    conditional: { type: 'boolean', default: false },
    unmet: { type: 'boolean', default: false },
  }) as { values: typeof values });
} catch (e) {
  usage(`${(e as Error).message} (npm run demo -- --help lists the options)`);
}
if (values.help) {
  process.stdout.write(HELP + '\n');
  process.exit(0);
}
if (values.unmet && !values.conditional) usage('--unmet is a condition of --conditional: give --conditional too');
if (values.conditional && values.sync) usage('--conditional and --sync are two different sends: give one');
const chainId = Number(values['chain-id']);
if (!Number.isSafeInteger(chainId) || chainId <= 0) usage(`--chain-id ${JSON.stringify(values['chain-id'])} is not a chain id`);
if (!URL.canParse(values.url) || !/^(https?|wss?):$/.test(new URL(values.url).protocol))
  usage(`--url ${JSON.stringify(values.url)} is not an http(s) or ws(s) URL`);
if (!URL.canParse(values.rpc) || !/^https?:$/.test(new URL(values.rpc).protocol)) usage(`--rpc ${JSON.stringify(values.rpc)} is not an http(s) URL`);

// 1. Connect: eth_chainId must be the expected chain, else stop.
let gate: Awaited<ReturnType<typeof connectTxgate>>;
try {
  gate = await connectTxgate({ url: values.url, apiKey: process.env.TXGATE_API_KEY ?? DEV_API_KEY, chainId, chainRpcUrl: values.rpc });
} catch (e) {
  console.error(`${e instanceof TxgateError ? e.reason : 'error'}: ${(e as Error).message}`);
  process.exit(1);
}
console.log(`1. eth_chainId = 0x${chainId.toString(16)} (as expected)`);

// 2. The tip from GET /tip-addresses; nonce, gas and fees from the chain RPC; signed locally.
const tips = await gate.tipAddresses().catch((e: unknown) => fail(`GET /tip-addresses: ${(e as Error).message}`));
const account = privateKeyToAccount(ANVIL_KEYS[0] as Hex);
const chain = {
  id: chainId,
  name: 'local',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [values.rpc] } },
} as const;
const client = createPublicClient({ chain, transport: http(values.rpc) });
const nonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
const fees = await client.estimateFeesPerGas();
const request = { to: tips.tipAddresses[0] as Hex, value: BigInt(tips.minTipWei), data: '0x' as Hex };
const gas = await client.estimateGas({ account: account.address, ...request });
const signed = await account.signTransaction({
  type: 'eip1559',
  chainId,
  nonce,
  gas,
  maxFeePerGas: fees.maxFeePerGas ?? parseGwei('2'),
  maxPriorityFeePerGas: fees.maxPriorityFeePerGas ?? parseGwei('1'),
  ...request,
});
console.log(`2. signed EIP-1559 tx: nonce ${nonce}, gas ${gas}, tip ${tips.minTipWei} wei to ${request.to}`);

// With --sync: one call, the receipt in its answer (or "pending": accepted, no receipt in the wait).
if (values.sync) {
  const o = await gate.submitSync(signed);
  if (o.kind === 'executed') {
    console.log(`3. executed (eth_sendRawTransactionSync): ${o.hash}`);
    console.log(`4. receipt status ${o.receipt.status} in block ${Number.parseInt(o.receipt.blockNumber, 16)}`);
    await edgeStatus(o.hash);
    await gate.close();
    console.log(`hash ${o.hash}\nstatus ${o.receipt.status}`);
    process.exit(o.receipt.status === '0x1' ? 0 : 3);
  }
  await gate.close();
  if (o.kind === 'pending') console.error(`3. accepted, no receipt within the wait: ${o.hash}`);
  else console.error(`3. ${o.kind}: ${JSON.stringify(o)}`);
  process.exit(o.kind === 'rejected' ? 1 : 4);
}

// With --conditional: one eth_sendRawTransactionConditional, its conditions read from the chain now.
if (values.conditional) await conditionalSend();

// 3–5. Submit and settle (an uncertain answer is resolved by the receipt of the local hash; only
// these bytes are ever resent), then the receipt from the chain RPC.
const out = await gate.submitAndWait(signed, { timeoutMs: 30_000 });
if (out.kind === 'mined') {
  console.log(`3. accepted by the sequencer: ${out.hash}`);
  console.log(`4. receipt status ${out.receipt.status} in block ${Number.parseInt(out.receipt.blockNumber, 16)}`);
  await edgeStatus(out.hash);
  await gate.close();
  console.log(`hash ${out.hash}\nstatus ${out.receipt.status}`);
  process.exit(out.status === 'success' ? 0 : 3);
}
await gate.close();
if (out.kind === 'rejected') console.error(`3. refused: HTTP ${out.status} ${out.reason}: ${out.message}`);
else if (out.kind === 'gave_up') console.error(`3. not sent: every attempt was refused before the sequencer (last: ${JSON.stringify(out.last)})`);
else if (out.kind === 'replaced') console.error(`3. replaced: ${out.replacedBy ?? 'another transaction'} used its nonce`);
else if (out.kind === 'dropped') console.error('3. dropped: the chain no longer knows it and its nonce is unused');
else if (out.kind === 'expired') console.error(`3. expired: the chain passed its ${out.expiredBy?.bound ?? 'bound'} without it`);
else console.error(`3. no receipt for ${out.hash} in time (last answer: ${JSON.stringify(out.last)})`);
process.exit(out.kind === 'rejected' ? 1 : 4);

/** With --track: the edge's status of the transaction (txgate_getTransactionStatus), one line. */
async function edgeStatus(hash: string): Promise<void> {
  if (!values.track) return;
  try {
    const s = await gate.status(hash);
    console.log(`5. the edge's status: ${s.status}${s.block === null ? '' : ` in block ${s.block.number}`} (txgate_getTransactionStatus, source ${s.source})`);
  } catch (e) {
    await gate.close();
    fail(`txgate_getTransactionStatus: ${(e as Error).message}`);
  }
}

/**
 * With --conditional: the conditions read from the chain RPC (the head's number and time, the tip
 * address's storage root, slot 0 of the sender), sent with the signed bytes; included, then its
 * receipt. With --unmet, slot 0 of the tip address said to hold a value it does not: refused.
 */
async function conditionalSend(): Promise<never> {
  const head = await client.getBlock({ blockTag: 'latest' });
  const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;
  const quantity = (n: bigint) => `0x${n.toString(16)}`;
  const SLOT0 = word(0n);
  const proof = await client.getProof({ address: request.to, storageKeys: [] });
  const senderSlot = BigInt((await client.getStorageAt({ address: account.address, slot: SLOT0 as Hex })) ?? '0x0');
  const tipSlot = BigInt((await client.getStorageAt({ address: request.to, slot: SLOT0 as Hex })) ?? '0x0');
  const options = {
    blockNumberMin: quantity(head.number),
    blockNumberMax: quantity(head.number + 100n),
    timestampMax: quantity(head.timestamp + 3600n),
    knownAccounts: values.unmet
      ? { [request.to]: { [SLOT0]: word(tipSlot + 1n) } }
      : { [request.to]: proof.storageHash, [account.address]: { [SLOT0]: word(senderSlot) } },
  };
  console.log(`3. conditions: ${JSON.stringify(options)}`);
  const o = await gate.submitConditional(signed, options);
  if (values.unmet) {
    await gate.close();
    if (o.kind === 'rejected' && o.code === -32003) {
      console.log(`4. refused as expected (eth_sendRawTransactionConditional): ${o.code} ${o.message}`);
      process.exit(0);
    }
    console.error(`4. expected a -32003 refusal, got: ${JSON.stringify(o)}`);
    process.exit(1);
  }
  if (o.kind !== 'accepted') {
    await gate.close();
    console.error(`4. ${o.kind}: ${JSON.stringify(o)}`);
    process.exit(o.kind === 'rejected' ? 1 : 4);
  }
  console.log(`4. accepted by the sequencer (eth_sendRawTransactionConditional): ${o.hash}`);
  const receipt = await client.waitForTransactionReceipt({ hash: o.hash as Hex, timeout: 30_000 }).catch(() => null);
  await edgeStatus(o.hash);
  await gate.close();
  if (receipt === null) {
    console.error(`5. no receipt for ${o.hash} in time`);
    process.exit(4);
  }
  console.log(`5. receipt status ${receipt.status === 'success' ? '0x1' : '0x0'} in block ${receipt.blockNumber}`);
  console.log(`hash ${o.hash}\nstatus ${receipt.status === 'success' ? '0x1' : '0x0'}`);
  process.exit(receipt.status === 'success' ? 0 : 3);
}
