/**
 * A stub sequencer for load tests: answers eth_sendRawTransaction at once with the keccak of
 * the raw bytes (the hash txgate expects), after an optional delay, and eth_chainId with the
 * chain id. Usage: node stub-sequencer.js PORT [DELAY_MS] [CHAIN_ID]
 */
import { initCrypto, keccak256, uws } from '../src/native.js';
import { onBody } from './uws-body.js';

const port = Number(process.argv[2] ?? 18200);
const delayMs = Number(process.argv[3] ?? 0);
const chainHex = '0x' + Number(process.argv[4] ?? 4663).toString(16);
await initCrypto();

type Rpc = { id?: unknown; method?: unknown; params?: unknown };

uws()
  .App()
  .post('/*', (res) =>
    onBody(res, (body, aborted) => {
      let answer: string;
      let msg: Rpc | null = null;
      try {
        msg = JSON.parse(body.toString()) as Rpc | null;
        const p = msg?.params;
        const result =
          msg?.method === 'eth_chainId'
            ? chainHex
            : msg?.method === 'eth_sendRawTransaction' && Array.isArray(p) && typeof p[0] === 'string'
              ? '0x' + Buffer.from(keccak256(Buffer.from(p[0].slice(2), 'hex'))).toString('hex')
              : null;
        answer =
          result === null
            ? `{"jsonrpc":"2.0","id":${JSON.stringify(msg?.id ?? null)},"error":{"code":-32601,"message":"not served by the stub"}}`
            : `{"jsonrpc":"2.0","id":${JSON.stringify(msg!.id)},"result":"${result}"}`;
      } catch {
        // A bench tool still answers what it does not understand, instead of dying mid-run.
        answer = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}';
      }
      const send = () => {
        if (!aborted())
          res.cork(() => {
            res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(answer);
          });
      };
      if (delayMs > 0 && msg?.method !== 'eth_chainId') setTimeout(send, delayMs);
      else send();
    }),
  )
  .listen('127.0.0.1', port, (s) => {
    if (s === false) process.exit(1);
    process.stdout.write('ready\n');
  });
