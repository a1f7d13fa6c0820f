/**
 * bench:load's fixtures: the accounts, a pool of distinct signed submissions, and the wrk
 * scripts of each scenario (a fixed body, or a line of the pool per request), written into the
 * bench's temporary directory.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { privateKeyToAddress } from 'viem/accounts';
import { keySha256 } from '../../src/accounts/keys.js';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { tippedTransfer } from '../common/transfers.js';
import { initCrypto } from '../../src/base/native.js';

export const JSON_CT = { 'Content-Type': 'application/json' };
const rpcBody = (method: string, params: unknown[], id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

const DONE = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nRESULT {"requests":%d,"duration_us":%d,"non2xx":%d,"socket_errors":%d,"p50":%d,"p99":%d,"p999":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end`;

export interface LoadFixtures {
  readonly keys: { readonly load: string; readonly listed: string; readonly sync: string };
  readonly accounts: unknown;
  /** The pool's bodies, one distinct transaction each. */
  readonly validBodies: readonly string[];
  /** The main scenarios' wrk scripts, by scenario. */
  readonly scenarios: Readonly<Record<string, string>>;
  /** The sync section's scripts: the plain send and the sync send, with the sync grant's key. */
  readonly syncScripts: { readonly plain: string; readonly sync: string };
}

/** Signs `poolSize` transactions from 16 senders and writes the pool and the scripts into `dir`. */
export async function loadFixtures(dir: string, poolSize: number): Promise<LoadFixtures> {
  await initCrypto();
  const keys = {
    load: 'txg_load_' + randomBytes(24).toString('base64url'),
    listed: 'txg_load_listed_' + randomBytes(24).toString('base64url'),
    sync: 'txg_load_sync_' + randomBytes(24).toString('base64url'),
  };
  const senders = Array.from({ length: 16 }, () => '0x' + randomBytes(32).toString('hex'));
  const tx = (i: number, value = 1_000_000_000_000n, to: string = ANVIL_TIP_ADDRESS) =>
    tippedTransfer(senders[i % senders.length]!, Math.floor(i / senders.length), { value, to });

  process.stderr.write(`signing ${poolSize} transactions from ${senders.length} senders…\n`);
  const validBodies = Array.from({ length: poolSize }, (_, i) => rpcBody('eth_sendRawTransaction', [tx(i)], i));
  writeFileSync(join(dir, 'valid.txt'), validBodies.join('\n') + '\n');
  // The same transactions sent with eth_sendRawTransactionSync.
  writeFileSync(join(dir, 'sync.txt'), validBodies.map((b) => b.replace('"eth_sendRawTransaction"', '"eth_sendRawTransactionSync"')).join('\n') + '\n');
  const untipped = rpcBody('eth_sendRawTransaction', [tx(0, 0n, '0x3333333333333333333333333333333333333333')]);
  const grant = { chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '1000000000000' };
  const accounts = {
    accounts: [
      { id: 'load', keySha256: [keySha256(keys.load)], grants: [grant] },
      // The same grant with a sender allow-list naming every signer of the pool: each
      // submission's sender is recovered and looked up.
      { id: 'listed', keySha256: [keySha256(keys.listed)], grants: [{ ...grant, senders: senders.map((k) => privateKeyToAddress(k as `0x${string}`)) }] },
      // The first grant, with the sync send.
      { id: 'sync', keySha256: [keySha256(keys.sync)], grants: [{ ...grant, sync: true }] },
    ],
  };

  const luaStatic = (name: string, body: string, headers: Record<string, string>): string => {
    const h = Object.entries(headers)
      .map(([k, v]) => `wrk.headers["${k}"] = "${v}"`)
      .join('\n');
    const f = join(dir, `${name}.lua`);
    writeFileSync(f, `wrk.method = "POST"\nwrk.body = [[${body}]]\n${h}\n${DONE}`);
    return f;
  };
  const luaPool = (name: string, file: string, headers: Record<string, string>): string => {
    const h = Object.entries(headers)
      .map(([k, v]) => `["${k}"] = "${v}"`)
      .join(', ');
    const f = join(dir, `${name}.lua`);
    writeFileSync(
      f,
      `local bodies = {}\nfor line in io.lines("${file}") do bodies[#bodies + 1] = line end\nlocal i = math.random(#bodies)\nlocal headers = { ${h} }\n` +
        `request = function()\n  i = i % #bodies + 1\n  return wrk.format("POST", "/", headers, bodies[i])\nend\n${DONE}`,
    );
    return f;
  };
  const scenarios = {
    eth_chainId: luaStatic('chainid', rpcBody('eth_chainId', []), JSON_CT),
    '401 unauthorized': luaStatic('401', validBodies[0]!, { ...JSON_CT, 'X-Api-Key': 'txg_wrong_key' }),
    '402 fee_rejected': luaStatic('402', untipped, { ...JSON_CT, 'X-Api-Key': keys.load }),
    'valid submission': luaPool('valid', join(dir, 'valid.txt'), { ...JSON_CT, 'X-Api-Key': keys.load }),
    'valid submission, sender-listed grant': luaPool('listed', join(dir, 'valid.txt'), { ...JSON_CT, 'X-Api-Key': keys.listed }),
  };
  const syncScripts = {
    plain: luaPool('sync-plain', join(dir, 'valid.txt'), { ...JSON_CT, 'X-Api-Key': keys.sync }),
    sync: luaPool('sync', join(dir, 'sync.txt'), { ...JSON_CT, 'X-Api-Key': keys.sync }),
  };
  return { keys, accounts, validBodies, scenarios, syncScripts };
}
