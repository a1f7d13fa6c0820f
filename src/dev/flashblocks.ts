/**
 * A flashblocks builder over a real anvil, for `npm start -- --flashblocks` and the tests: the
 * chain's sequencer (JSON-RPC over HTTP, every call passed to anvil; a transaction anvil takes is
 * queued for the next slice) and its flashblocks stream (a WebSocket). Anvil runs without mining
 * (`--no-mining`); this seals a block every `blockMs` (`evm_mine`, 2 s) and every `sliceMs`
 * (200 ms) publishes the next slice of the block being built: index 0 with the base at the
 * block's start, then the transactions anvil took since the last slice (the ones the sealed
 * block will carry). Written from the shapes flashbots/op-rbuilder
 * `crates/op-rbuilder/src/builder/wspub.rs` pins (its `golden_wire` tests) for alloy-rs/op-alloy
 * `crates/rpc-types-engine/src/flashblock/` (`OpFlashblockPayload`): `base.block_number` a hex
 * quantity, `metadata.block_number` a JSON number, receipts tagged by `type` with camelCase
 * fields; frames as text (op-rbuilder) and Brotli binary (Base's public endpoint), alternately.
 *
 * A builder executes what it publishes; this one does not: a receipt's `status` is what
 * anvil's `eth_call` of the transaction against the latest state says, and its
 * `cumulativeGasUsed` the running sum of `eth_estimateGas` (logs are not simulated: `[]`).
 * `leaveOut(hash)`: the transaction is preconfirmed as any, then dropped from anvil's pool
 * before the seal (`anvil_dropTransaction`) and sent again after it: a later block takes it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { brotliCompressSync } from 'node:zlib';
import { WebSocketServer, type WebSocket } from 'ws';

export interface PublisherOptions {
  /** The anvil (started with `--no-mining`) it builds on. */
  readonly anvil: string;
  readonly port?: number;
  readonly blockMs?: number;
  readonly sliceMs?: number;
  /** How frames go: `text`, `brotli`, or `alternate` (the default: text, Brotli, text, …). */
  readonly frames?: 'text' | 'brotli' | 'alternate';
}

interface Queued {
  readonly hash: string;
  readonly raw: string;
}

const ZERO32 = '0x' + '0'.repeat(64);
const hex = (n: number | bigint): string => '0x' + n.toString(16);

export class FlashblocksPublisher {
  /** The stream's URL (`chains[].flashblocks.url`) and the sequencer's (`chains[].sequencers`). */
  url = '';
  sequencerUrl = '';
  /** Slices and blocks published, and preconfirmations left out of their sealed block. */
  published = 0;
  sealed = 0;
  leftOut = 0;
  private server: Server | null = null;
  private wss: WebSocketServer | null = null;
  private readonly clients = new Set<WebSocket>();
  private queue: Queued[] = [];
  /** Published in the block being built, in order. */
  private inBlock: Queued[] = [];
  private readonly leaving = new Set<string>();
  private payload = 0n;
  private index = 0;
  private number = 0;
  private gas = 0n;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  /**
   * From a block's last slice to its seal, transactions wait (a slice's interval at most) and go
   * into the next block: every transaction of a sealed block was in one of its slices, a slice's
   * interval or more before the seal.
   */
  private sealing: Promise<void> | null = null;
  private stopped = false;
  private startedAt = 0;
  private readonly blockMs: number;
  private readonly sliceMs: number;

  constructor(private readonly opts: PublisherOptions) {
    this.blockMs = opts.blockMs ?? 2_000;
    this.sliceMs = opts.sliceMs ?? 200;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.http(req, res));
    this.server = server;
    this.wss = new WebSocketServer({ server });
    this.wss.on('connection', (ws) => {
      this.clients.add(ws);
      ws.on('close', () => this.clients.delete(ws));
      ws.on('error', () => ws.terminate());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    const port = (server.address() as { port: number }).port;
    this.url = `ws://127.0.0.1:${port}`;
    this.sequencerUrl = `http://127.0.0.1:${port}`;
    await this.newBlock();
    this.startedAt = Date.now();
    this.tick();
    return this;
  }

  /** The transaction is preconfirmed, then left out of the block sealed after it (sent again after the seal). */
  leaveOut(hash: string): void {
    this.leaving.add(hash.toLowerCase());
  }

  /** A frame as it is, to every subscriber (a test's hostile frame). */
  sendRaw(data: string | Buffer, binary = typeof data !== 'string'): void {
    for (const ws of this.clients) ws.send(data, { binary });
  }

  /** Connections to the stream now. */
  get subscribers(): number {
    return this.clients.size;
  }

  /** Cuts every subscriber's connection (a test's lost stream). */
  disconnect(): void {
    for (const ws of this.clients) ws.terminate();
  }

  /** Publishing paused (`true`: a silent stream) or again. */
  paused = false;

  private tick(): void {
    if (this.stopped) return;
    // Slices on a fixed grid from the start (a slow step delays the next one, never shifts the grid).
    const next = this.sliceMs - ((Date.now() - this.startedAt) % this.sliceMs);
    this.timer = setTimeout(() => {
      void this.step().finally(() => this.tick());
    }, next);
    this.timer.unref();
  }

  private async step(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      if (this.index * this.sliceMs >= this.blockMs) {
        // What anvil took after the last slice (a send under way as the block closed) is published before the seal.
        if (this.queue.length > 0 && !this.paused) await this.slice();
        await this.seal();
        await this.newBlock();
        this.open();
      }
      if (!this.paused) await this.slice();
      this.index++;
      // The block's last slice is out: transactions wait for the seal (a slice's interval at most), then go into the next block.
      if (this.index * this.sliceMs >= this.blockMs) this.close();
    } catch {
      // anvil gone (stopping): the next step tries again
    } finally {
      this.busy = false;
    }
  }

  private release: (() => void) | null = null;

  private close(): void {
    if (this.sealing === null) this.sealing = new Promise((r) => (this.release = r));
  }

  private open(): void {
    this.sealing = null;
    this.release?.();
    this.release = null;
  }

  private async newBlock(): Promise<void> {
    const latest = (await this.call('eth_getBlockByNumber', ['latest', false])) as { number: string; hash: string; timestamp: string; gasLimit: string };
    this.number = Number(latest.number) + 1;
    this.payload++;
    this.index = 0;
    this.gas = 0n;
    this.inBlock = [];
    this.base = {
      parent_beacon_block_root: ZERO32,
      parent_hash: latest.hash,
      fee_recipient: '0x4200000000000000000000000000000000000011',
      prev_randao: ZERO32,
      block_number: hex(this.number),
      gas_limit: latest.gasLimit,
      timestamp: hex(Math.max(Number(latest.timestamp) + 1, Math.floor(Date.now() / 1000))),
      extra_data: '0x',
      base_fee_per_gas: '0x3b9aca00',
    };
  }

  private base: Record<string, string> = {};

  private async slice(): Promise<void> {
    const txs = this.index === 0 ? [] : this.queue.splice(0);
    const receipts: Record<string, unknown> = {};
    for (const t of txs) {
      receipts[t.hash] = await this.receipt(t.hash);
      this.inBlock.push(t);
    }
    const payload = {
      payload_id: '0x' + this.payload.toString(16).padStart(16, '0'),
      index: this.index,
      ...(this.index === 0 ? { base: this.base } : {}),
      diff: {
        state_root: ZERO32,
        receipts_root: ZERO32,
        logs_bloom: '0x' + '00'.repeat(256),
        gas_used: hex(this.gas),
        block_hash: ZERO32,
        transactions: txs.map((t) => t.raw),
        withdrawals: [],
        withdrawals_root: ZERO32,
      },
      metadata: { block_number: this.number, new_account_balances: {}, receipts },
    };
    const text = JSON.stringify(payload);
    const mode = this.opts.frames ?? 'alternate';
    const brotli = mode === 'brotli' || (mode === 'alternate' && this.published % 2 === 1);
    this.sendRaw(brotli ? brotliCompressSync(Buffer.from(text)) : text, brotli);
    this.published++;
  }

  /** The receipt a builder would publish, simulated on anvil (see the file's head). */
  private async receipt(hash: string): Promise<Record<string, unknown>> {
    const tx = (await this.call('eth_getTransactionByHash', [hash])) as Record<string, string> | null;
    let status = '0x1';
    if (tx !== null) {
      const call = { from: tx.from, to: tx.to, data: tx.input, value: tx.value, gas: tx.gas };
      const ok = await this.call('eth_call', [call, 'latest']).then(
        () => true,
        () => false,
      );
      status = ok ? '0x1' : '0x0';
      const est = await this.call('eth_estimateGas', [call, 'latest']).then(
        (g) => BigInt(g as string),
        () => BigInt(tx.gas ?? '0x5208'),
      );
      this.gas += est;
    }
    return { type: tx?.type ?? '0x2', status, cumulativeGasUsed: hex(this.gas), logs: [] };
  }

  private async seal(): Promise<void> {
    const out = this.inBlock.filter((t) => this.leaving.has(t.hash));
    for (const t of out) await this.call('anvil_dropTransaction', [t.hash]);
    await this.call('evm_mine', []);
    this.sealed++;
    // Mined, published or not (a paused stream's).
    this.queue = [];
    for (const t of out) {
      this.leaving.delete(t.hash);
      this.leftOut++;
      await this.call('eth_sendRawTransaction', [t.raw]);
      this.queue.push(t);
    }
  }

  /** The sequencer: every call passed to anvil; a transaction it takes queued for the next slice. */
  private async http(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    let answer = '';
    try {
      const m = JSON.parse(body) as { method?: string; params?: unknown[] };
      if (m.method === 'eth_sendRawTransaction') while (this.sealing !== null) await this.sealing;
      const r = await fetch(this.opts.anvil, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      answer = await r.text();
      const a = JSON.parse(answer) as { result?: unknown };
      if (m.method === 'eth_sendRawTransaction' && typeof a.result === 'string' && typeof m.params?.[0] === 'string')
        this.queue.push({ hash: a.result.toLowerCase(), raw: m.params[0].toLowerCase() });
    } catch {
      answer ||= '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the builder could not reach anvil"}}';
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
  }

  private async call(method: string, params: unknown[]): Promise<unknown> {
    const r = await fetch(this.opts.anvil, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const a = (await r.json()) as { result?: unknown; error?: { message?: string } };
    if (a.error !== undefined) throw new Error(`${method}: ${a.error.message ?? 'error'}`);
    return a.result;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.open();
    for (const ws of this.clients) ws.terminate();
    await new Promise<void>((resolve) => (this.wss === null ? resolve() : this.wss.close(() => resolve())));
    await new Promise<void>((resolve) => (this.server === null ? resolve() : this.server.close(() => resolve())));
  }
}
