/**
 * The rehearsal's sequencer (rehearsal.ts): `/sink` on the rehearsal's private listener, over
 * HTTP (POST) and WebSocket (a frame a call, answered by id), as a sequencer answers
 * eth_sendRawTransaction: the keccak-256 of the bytes it was sent. It answers nothing else, and
 * nothing it answers reaches a client but the rehearsal's own.
 */
import type { HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { keccak256Hex } from '../base/native.js';

export const SINK_PATH = '/sink';
/** A call's body this long at most (a rehearsal's is a few hundred bytes). */
const MAX_BODY = 64 << 10;

/** A raw transaction's hash as a sequencer answers it: keccak-256 of its bytes, 0x-hex (`raw` is 0x-hex). */
export const hashOfRaw = (raw: string): string => keccak256Hex(Buffer.from(raw.slice(2), 'hex'));

/** The answer to one JSON-RPC call sent to the sink. */
export function sinkAnswer(text: string): string {
  let id: unknown = null;
  try {
    const m = JSON.parse(text) as { id?: unknown; method?: unknown; params?: unknown } | null;
    id = m?.id ?? null;
    const raw = Array.isArray(m?.params) ? (m.params[0] as unknown) : undefined;
    if (m?.method === 'eth_sendRawTransaction' && typeof raw === 'string' && /^0x(?:[0-9a-f]{2})+$/i.test(raw)) {
      return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":"${hashOfRaw(raw)}"}`;
    }
  } catch {
    /* answered below */
  }
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32601,"message":"the rehearsal's sink answers eth_sendRawTransaction only"}}`;
}

function readBody(res: HttpResponse, done: (text: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, last) => {
    if (aborted) return;
    size += chunk.byteLength;
    if (size <= MAX_BODY) chunks.push(Buffer.from(chunk.slice(0)));
    if (!last) return;
    const text = size > MAX_BODY ? '' : Buffer.concat(chunks).toString('utf8');
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(sinkAnswer(text));
    });
    done(text);
  });
}

/** Registers the sink's routes on `app` (before any route that takes every path). */
export function registerSink(app: TemplatedApp): void {
  const decoder = new TextDecoder();
  app
    .post(SINK_PATH, (res) => readBody(res, () => {}))
    .ws(SINK_PATH, {
      maxPayloadLength: MAX_BODY,
      idleTimeout: 0,
      message: (ws, data) => {
        ws.send(sinkAnswer(decoder.decode(data)));
      },
    });
}
