/**
 * `npm run demo`: the client flow of the interface (§1 steps 1–5) against `npm start`:
 * eth_chainId check; nonce, gas and fees from the chain RPC; an EIP-1559 transaction paying
 * the tip, signed locally; submission with X-Api-Key; the receipt polled with bounded backoff.
 */
import { parseArgs } from 'node:util';
import { createPublicClient, http, parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_KEYS, ANVIL_TIP_ADDRESS } from '../src/dev/anvil.js';
import { DEV_API_KEY, DEV_MIN_TIP_WEI } from '../src/dev/dev-setup.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.TXGATE_URL ?? 'http://127.0.0.1:8080' },
    rpc: { type: 'string', default: process.env.CHAIN_RPC_URL ?? 'http://127.0.0.1:8545' },
    'chain-id': { type: 'string', default: '4663' },
  },
});
const apiKey = process.env.TXGATE_API_KEY ?? DEV_API_KEY;
const expectedChainId = Number(values['chain-id']);

/** A JSON-RPC answer as the demo reads it (or the text of a non-JSON answer). */
// biome-ignore lint/suspicious/noExplicitAny: the demo prints whatever came back
type RpcBody = any;

async function rpc(url: string, method: string, params: unknown[], headers: Record<string, string> = {}): Promise<{ status: number; body: RpcBody }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const ct = r.headers.get('content-type') ?? '';
  return { status: r.status, body: ct.includes('application/json') ? await r.json() : await r.text() };
}

// 1. eth_chainId on the service: must be the expected chain, else stop.
const cid = await rpc(values.url, 'eth_chainId', []);
const want = '0x' + expectedChainId.toString(16);
if (cid.status !== 200 || cid.body?.result !== want) {
  console.error(`eth_chainId on ${values.url} answered ${cid.status} ${JSON.stringify(cid.body)}; expected ${want}. Stopping.`);
  process.exit(1);
}
console.log(`1. eth_chainId = ${cid.body.result} (as expected)`);

// 2. nonce, gas and fees from the chain RPC; build and sign an EIP-1559 tx paying the tip.
const account = privateKeyToAccount(ANVIL_KEYS[0] as Hex);
const chain = { id: expectedChainId, name: 'local', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [values.rpc] } } } as const;
const client = createPublicClient({ chain, transport: http(values.rpc) });
const nonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
const fees = await client.estimateFeesPerGas();
const request = { to: ANVIL_TIP_ADDRESS as Hex, value: DEV_MIN_TIP_WEI, data: '0x' as Hex };
const gas = await client.estimateGas({ account: account.address, ...request });
const signed = await account.signTransaction({
  type: 'eip1559',
  chainId: expectedChainId,
  nonce,
  gas,
  maxFeePerGas: fees.maxFeePerGas ?? parseGwei('2'),
  maxPriorityFeePerGas: fees.maxPriorityFeePerGas ?? parseGwei('1'),
  ...request,
});
console.log(`2. signed EIP-1559 tx: nonce ${nonce}, gas ${gas}, tip ${DEV_MIN_TIP_WEI} wei to ${ANVIL_TIP_ADDRESS}`);

// 3–4. submit with X-Api-Key; HTTP 200 can still carry a JSON-RPC error.
const sub = await rpc(values.url, 'eth_sendRawTransaction', [signed], { 'x-api-key': apiKey });
if (sub.status !== 200 || typeof sub.body !== 'object' || sub.body.error !== undefined) {
  console.error(`3. submission failed: HTTP ${sub.status} ${JSON.stringify(sub.body)}`);
  process.exit(1);
}
const hash = sub.body.result as Hex;
console.log(`3. accepted by the sequencer: ${hash}`);

// 5. poll the chain RPC for the receipt with bounded backoff.
let delay = 100;
for (let i = 0; i < 20; i++) {
  const rc = await rpc(values.rpc, 'eth_getTransactionReceipt', [hash]);
  const receipt = rc.body?.result;
  if (receipt !== null && receipt !== undefined) {
    console.log(`4. receipt status ${receipt.status} in block ${parseInt(receipt.blockNumber, 16)}`);
    console.log(`hash ${hash}\nstatus ${receipt.status}`);
    process.exit(receipt.status === '0x1' ? 0 : 2);
  }
  await new Promise((r) => setTimeout(r, delay));
  delay = Math.min(delay * 2, 2000);
}
console.error(`no receipt for ${hash} after bounded polling`);
process.exit(3);
