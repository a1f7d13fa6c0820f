/**
 * The benches' stub sequencer: answers eth_sendRawTransaction at once with the keccak of the raw
 * bytes (the hash txgate expects), after an optional delay, and eth_chainId with the chain id.
 * As a chain that includes every transaction at once, it also answers
 * eth_sendRawTransactionSync with a receipt of the transaction (EIP-7966), and
 * eth_getTransactionReceipt with a receipt of the hash asked for (a chain RPC for the sync
 * send's receipt mode). As an express lane auction contract (rounds of a day from 0, no logs;
 * the current round held by HOLDER, or by nobody: `-`): eth_call, eth_blockNumber, eth_getLogs;
 * as its endpoint, timeboost_sendExpressLaneTransaction answered null, and
 * eth_getTransactionByHash answered with the transaction (every one is taken at once).
 * HTTP POST and WebSocket frames alike.
 *
 * In a bench's own process (`serveStub`, with `onSubmit` to record what it received: bench:burst),
 * or as a child on its own core (`startStub`, or the command line):
 *   node dist/bench/servers/stub-sequencer.js PORT [DELAY_MS] [CHAIN_ID] [HOLDER] [WS_IDLE_CLOSE_S]
 *
 * Idle connections: uWebSockets.js closes a kept-alive HTTP connection idle for about 10 s on its
 * own (as a real sequencer's server or proxy closes idle ones: bench:silence). A WebSocket is
 * closed only where `wsIdleCloseS` is set: then one that carried no message (a JSON-RPC frame;
 * pings do not count) for that long is closed, as uWebSockets.js's `idleTimeout` is documented
 * ("Maximum amount of seconds that may pass without sending or getting a message", its
 * docs/index.d.ts) and as a proxy that times out idle tunnels does; stricter than a uWS server,
 * whose timer a client's ping also resets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { initCrypto, keccak256, uws } from '../../src/base/native.js';
import { onBody } from './uws-body.js';

import { server } from '../common/paths.js';

export interface StubOptions {
  /** 0: any free port. */
  readonly port: number;
  /** Every answer but eth_chainId's this late. */
  readonly delayMs?: number;
  readonly chainId?: number;
  /** The controller the auction names for the current round (null: nobody). */
  readonly holder?: string | null;
  /** Called with each submission's hash as it arrives (eth_sendRawTransaction and its sync form). */
  readonly onSubmit?: (hash: string) => void;
  /** A WebSocket with no message for this many seconds is closed (0 or absent: never). */
  readonly wsIdleCloseS?: number;
}

type Rpc = { id?: unknown; method?: unknown; params?: unknown };

let block = 0x100000;
/** A receipt of `hash` in the shape a node gives it (a plain transfer, executed). */
const receipt = (hash: string) =>
  `{"type":"0x2","status":"0x1","cumulativeGasUsed":"0x5208","logs":[],"logsBloom":"0x${'0'.repeat(512)}",` +
  `"transactionHash":"${hash}","transactionIndex":"0x0","blockHash":"0x${(++block).toString(16).padStart(64, '0')}","blockNumber":"0x${block.toString(16)}",` +
  `"gasUsed":"0x5208","effectiveGasPrice":"0x3b9aca00","from":"0x${'11'.repeat(20)}","to":"0x${'22'.repeat(20)}","contractAddress":null}`;
export const hashOf = (raw: string) => '0x' + Buffer.from(keccak256(Buffer.from(raw.slice(2), 'hex'))).toString('hex');
const submitted = (raw: string, onSubmit?: (hash: string) => void) => {
  const hash = hashOf(raw);
  onSubmit?.(hash);
  return hash;
};

/** The answer to one JSON-RPC request (an HTTP body or a WebSocket frame), and its method. */
function answerOf(text: string, chainHex: string, holder: string | null, onSubmit?: (hash: string) => void): { answer: string; method: unknown } {
  let msg: Rpc | null = null;
  try {
    msg = JSON.parse(text) as Rpc | null;
    const p = msg?.params;
    const arg = Array.isArray(p) && typeof p[0] === 'string' ? p[0] : null;
    // The result as JSON text.
    const result =
      msg?.method === 'eth_chainId'
        ? `"${chainHex}"`
        : msg?.method === 'eth_call' || msg?.method === 'eth_blockNumber' || msg?.method === 'eth_getLogs'
          ? auctionAnswer(msg.method, p, holder)
          : msg?.method === 'timeboost_sendExpressLaneTransaction'
            ? 'null'
            : arg === null
              ? null
              : msg?.method === 'eth_sendRawTransaction' || msg?.method === 'eth_sendRawTransactionConditional'
                ? `"${submitted(arg, onSubmit)}"`
                : msg?.method === 'eth_sendRawTransactionSync'
                  ? receipt(submitted(arg, onSubmit))
                  : msg?.method === 'eth_getTransactionReceipt'
                    ? receipt(arg.toLowerCase())
                    : msg?.method === 'eth_getTransactionByHash'
                      ? `{"hash":"${arg.toLowerCase()}"}`
                      : null;
    return {
      method: msg?.method,
      answer:
        result === null
          ? `{"jsonrpc":"2.0","id":${JSON.stringify(msg?.id ?? null)},"error":{"code":-32601,"message":"not served by the stub"}}`
          : `{"jsonrpc":"2.0","id":${JSON.stringify(msg!.id)},"result":${result}}`,
    };
  } catch {
    // A bench tool still answers what it does not understand, instead of dying mid-run.
    return { method: undefined, answer: '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}' };
  }
}

const DAY = 86_400;
/** The auction's reads: roundTimingInfo() (offset 0, rounds of a day, 15 s closing, 15 s reserve), resolvedRounds(), the head, no logs. */
function auctionAnswer(method: string, params: unknown, holder: string | null): string {
  if (method === 'eth_blockNumber') return '"0x1"';
  if (method === 'eth_getLogs') return '[]';
  const data = Array.isArray(params) ? (params[0] as { data?: unknown } | undefined)?.data : undefined;
  const word = (n: number) => n.toString(16).padStart(64, '0');
  if (data === '0x0152682d') return `"0x${word(0)}${word(DAY)}${word(15)}${word(15)}"`;
  // resolvedRounds(): (controller, round) twice, the latest first.
  const round = Math.floor(Date.now() / 1000 / DAY);
  return holder === null ? `"0x${word(0).repeat(4)}"` : `"0x${holder.slice(2).padStart(64, '0')}${word(round)}${word(0)}${word(0)}"`;
}

const decoder = new TextDecoder();

/** Serves the stub in this process; resolves with the port it listens on and a close. */
export async function serveStub(o: StubOptions): Promise<{ port: number; close(): void }> {
  await initCrypto();
  const delayMs = o.delayMs ?? 0;
  const chainHex = '0x' + (o.chainId ?? 4663).toString(16);
  const holder = o.holder === undefined || o.holder === null ? null : o.holder.toLowerCase();
  const answer = (text: string) => answerOf(text, chainHex, holder, o.onSubmit);
  // The open WebSockets and when each last carried a message (wsIdleCloseS).
  const lastMessage = new Map<unknown, number>();
  const idleS = o.wsIdleCloseS ?? 0;
  const sweep =
    idleS > 0
      ? setInterval(() => {
          const now = performance.now();
          for (const [ws, at] of lastMessage)
            if (now - at > idleS * 1000) {
              lastMessage.delete(ws);
              (ws as { end(code: number): void }).end(1001);
            }
        }, 250)
      : null;
  sweep?.unref();
  const app = uws()
    .App()
    .post('/*', (res) =>
      onBody(res, (body, aborted) => {
        const { answer: a, method } = answer(body.toString());
        const send = () => {
          if (!aborted())
            res.cork(() => {
              res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(a);
            });
        };
        if (delayMs > 0 && method !== 'eth_chainId') setTimeout(send, delayMs);
        else send();
      }),
    )
    // The same answers over WebSocket (a ws:// sequencer): one frame a request, answered by id.
    .ws('/*', {
      maxPayloadLength: 1 << 20,
      idleTimeout: 0,
      open: (ws) => {
        if (idleS > 0) lastMessage.set(ws, performance.now());
      },
      close: (ws) => {
        lastMessage.delete(ws);
      },
      message: (ws, data) => {
        if (idleS > 0) lastMessage.set(ws, performance.now());
        const { answer: a, method } = answer(decoder.decode(data));
        if (delayMs > 0 && method !== 'eth_chainId')
          setTimeout(() => {
            try {
              ws.send(a);
            } catch {
              // closed meanwhile
            }
          }, delayMs);
        else ws.send(a);
      },
    });
  const listening = await new Promise<unknown>((resolve) => app.listen('127.0.0.1', o.port, resolve));
  if (listening === false) throw new Error(`stub sequencer: port ${o.port} is taken`);
  return {
    port: uws().us_socket_local_port(listening as never),
    close: () => {
      if (sweep !== null) clearInterval(sweep);
      uws().us_listen_socket_close(listening as never);
    },
  };
}

/**
 * Starts the stub as a child process (on `cores` with taskset when given) and resolves once it
 * listens; it is added to `children` (a bench kills them on exit).
 */
export async function startStub(o: Omit<StubOptions, 'onSubmit'> & { readonly cores?: string; readonly children: ChildProcess[] }): Promise<ChildProcess> {
  const args = [server('stub-sequencer'), String(o.port), String(o.delayMs ?? 0), String(o.chainId ?? 4663), o.holder ?? '-', String(o.wsIdleCloseS ?? 0)];
  const cmd = o.cores !== undefined ? ['taskset', '-c', o.cores, 'node', ...args] : ['node', ...args];
  const child = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  o.children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`stub sequencer on port ${o.port} exited (${code})`)));
  });
  return child;
}

if (process.argv[1] === import.meta.filename) {
  const [port, delayMs, chainId, holder, wsIdleCloseS] = process.argv.slice(2);
  await serveStub({
    port: Number(port ?? 18200),
    delayMs: Number(delayMs ?? 0),
    chainId: Number(chainId ?? 4663),
    holder: holder === undefined || holder === '-' ? null : holder,
    wsIdleCloseS: Number(wsIdleCloseS ?? 0),
  }).catch(() => process.exit(1));
  process.stdout.write('ready\n');
}
