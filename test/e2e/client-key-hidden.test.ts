/**
 * The client kit never shows the account's API key when one of its objects is printed
 * (`console.log`, util.inspect, a logger that serializes what it is given): the gate from
 * connectTxgate, its links (HTTP and WebSocket) and the ethers provider hold the key in a private
 * field, never in a property, and the chain RPC URL's path (where a provider's key goes) is
 * kept the same way. Against a stand-in edge that answers eth_chainId only.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { TxgateProvider } from '../../packages/client/src/ethers.js';
import { connectTxgate } from '../../packages/client/src/index.js';
import { openLink } from '../../packages/client/src/link.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const KEY = 'txg_never_printed_0123456789abcdefghijklmnopqrstuvw';
const RPC_KEY = 'providerKeyNeverPrinted42';
const shown = (x: unknown) => inspect(x, { depth: Number.POSITIVE_INFINITY, showHidden: true, getters: true });

let server: Server;
let url: string;
before(async () => {
  // eth_chainId answers 4663; everything else an error. Only what the kit asks of the edge.
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const m = JSON.parse(body) as { id: number; method: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          m.method === 'eth_chainId' ? { jsonrpc: '2.0', id: m.id, result: '0x1237' } : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

describe('the client kit never prints the API key', () => {
  it("the gate from connectTxgate, after it has used the key; nor the chain RPC URL's path (a provider's key)", async () => {
    const gate = await connectTxgate({ url, apiKey: KEY, chainId: DEV_CHAIN_ID, chainRpcUrl: `${url}/v2/${RPC_KEY}`, keepAliveMs: 0 });
    try {
      assert.equal(shown(gate).includes(KEY), false, shown(gate));
      assert.equal(shown(gate).includes(RPC_KEY), false, shown(gate));
    } finally {
      await gate.close();
    }
  });

  it('its links, HTTP and WebSocket', async () => {
    for (const u of [url, url.replace('http://', 'ws://')]) {
      const link = openLink(u, KEY, { connectTimeoutMs: 500, timeoutMs: 500 });
      try {
        assert.equal(shown(link).includes(KEY), false, u);
      } finally {
        await link.close();
      }
    }
  });

  it('the ethers provider', async () => {
    const provider = new TxgateProvider({ url, apiKey: KEY, rpc: url, chainId: DEV_CHAIN_ID });
    try {
      assert.equal(shown(provider).includes(KEY), false);
    } finally {
      await provider.close();
    }
  });
});
