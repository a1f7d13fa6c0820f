/**
 * The watcher's client of the chain RPC (`chains[].rpc`): JSON-RPC batches over HTTP, so a
 * block's receipts or the nonces of many senders are one request. The chain RPC is a peer that
 * may lie or stall: every call has a deadline, an answer has a size cap, and whatever comes back
 * (not JSON, not an array, ids missing or repeated, an error per call) is read into one result
 * per call, a value or a failure; nothing it sends throws out of here.
 */
import { Pool } from 'undici';

/** A block with 1,000 transactions is ~70 kB of hashes; receipts of a few hundred are a few MB. */
const MAX_ANSWER_BYTES = 32 << 20;

export interface Call {
  readonly method: string;
  readonly params: readonly unknown[];
}

/** One call's result: its value (`null` included), or why there is none. */
export type Got = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly why: string };

export class ChainRpc {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;

  constructor(url: string, connections = 4) {
    const u = new URL(url);
    this.path = u.pathname + u.search;
    this.headers = { 'content-type': 'application/json' };
    if (u.username !== '' || u.password !== '')
      this.headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
    this.pool = new Pool(u.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000, connect: { timeout: 2_000 } });
  }

  /** One call. */
  async one(method: string, params: readonly unknown[], timeoutMs: number): Promise<Got> {
    return (await this.batch([{ method, params }], timeoutMs))[0]!;
  }

  /** Many calls in one request (none: none sent); one Got per call, in order. */
  async batch(calls: readonly Call[], timeoutMs: number): Promise<Got[]> {
    if (calls.length === 0) return [];
    const body = JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: i, method: c.method, params: c.params })));
    let text: string;
    try {
      text = await this.post(body, timeoutMs);
    } catch (e) {
      const why = e instanceof Error ? e.message.slice(0, 200) : 'failed';
      return calls.map(() => ({ ok: false, why }));
    }
    return readBatch(text, calls.length);
  }

  private async post(body: string, timeoutMs: number): Promise<string> {
    const signal = AbortSignal.timeout(timeoutMs);
    const r = await this.pool.request({
      path: this.path,
      method: 'POST',
      headers: this.headers,
      body,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of r.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        r.body.destroy();
        throw new Error('answer too large');
      }
      chunks.push(chunk);
    }
    if (r.statusCode < 200 || r.statusCode >= 300) throw new Error(`HTTP ${r.statusCode}`);
    return Buffer.concat(chunks).toString('utf8');
  }

  close(): Promise<void> {
    return this.pool.close().catch(() => {});
  }
}

/** A batch answer read into one Got per call (by id; a single object answers every call with its error). */
export function readBatch(text: string, n: number): Got[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fill(n, 'not JSON');
  }
  if (!Array.isArray(parsed)) {
    const e = errorText(parsed);
    return fill(n, e ?? 'not a batch answer');
  }
  const out: (Got | undefined)[] = new Array(n).fill(undefined);
  for (const m of parsed) {
    if (typeof m !== 'object' || m === null) continue;
    const id = (m as { id?: unknown }).id;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= n || out[id] !== undefined) continue;
    if ('result' in m) out[id] = { ok: true, value: (m as { result: unknown }).result };
    else out[id] = { ok: false, why: errorText(m) ?? 'no result' };
  }
  return out.map((g) => g ?? { ok: false, why: 'no answer for this call' });
}

function fill(n: number, why: string): Got[] {
  return Array.from({ length: n }, () => ({ ok: false, why }));
}

function errorText(m: unknown): string | null {
  if (typeof m !== 'object' || m === null) return null;
  const e = (m as { error?: unknown }).error;
  if (typeof e !== 'object' || e === null) return null;
  const msg = (e as { message?: unknown }).message;
  return typeof msg === 'string' ? msg.slice(0, 200) : 'error';
}

/** A 0x-hex quantity as a number, or null (not a string, not hex, beyond 2^53). */
export function quantity(v: unknown): number | null {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{1,14}$/.test(v)) return null;
  const n = Number.parseInt(v.slice(2), 16);
  return Number.isSafeInteger(n) ? n : null;
}

/** A 32-byte 0x-hex hash, lower-cased, or null. */
export function hash32(v: unknown): string | null {
  return typeof v === 'string' && v.length === 66 && /^0x[0-9a-fA-F]{64}$/.test(v) ? v.toLowerCase() : null;
}

/** A 20-byte 0x-hex address, lower-cased, or null. */
export function address(v: unknown): string | null {
  return typeof v === 'string' && v.length === 42 && /^0x[0-9a-fA-F]{40}$/.test(v) ? v.toLowerCase() : null;
}
