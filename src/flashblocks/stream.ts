/**
 * A chain's flashblocks stream on this thread (`chains[].flashblocks`, docs/flashblocks.md): one
 * WebSocket to the builder's stream, opened with the first subscriber (the chain's tracker, its
 * sync send), kept open and re-opened after a loss (0.1 s doubling to 5 s, jittered), each slice
 * read told to the subscribers and its transactions remembered a little while (feed.ts). One
 * per chain and process: the thread that owns it hands each slice to the others (threads/flashblocks-seam.ts).
 *
 * The stream is a hostile peer. A frame is read as op-rbuilder writes it (a text frame of JSON:
 * flashbots/op-rbuilder `crates/op-rbuilder/src/builder/wspub.rs`) or as Base's public endpoint
 * does (a binary frame, Brotli-compressed JSON), through one queue so that slices are read in
 * the order they came: a frame past `maxFrameBytes` (the connection's bound, and the bound a
 * Brotli frame may inflate to), one that is not JSON or not a slice (slice.ts), a slice of a
 * payload not started or an index already read: counted by kind, never read, never fatal. No
 * slice for `stallMs` while connected is a stall: counted, said on /ready, the connection
 * opened again; outcomes then come from the sealed blocks alone. Nothing here decides an
 * outcome: a preconfirmation only moves a tracked transaction to `preconfirmed` and answers a
 * sync call early; `included` still comes from the sealed block.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { brotliDecompress } from 'node:zlib';
import WebSocket from 'ws';
import { keccak256 } from '../base/native.js';
import type { Logger } from '../log/log.js';
import { upstreamLabel } from '../upstreams/upstream.js';
import type { FlashblocksConfig } from './config.js';
import type { Preconf } from './recent.js';
import { Building, readSlice, receiptOf } from './slice.js';
import { SliceFeed, type SliceRead } from './feed.js';
import { Backoff } from '../base/backoff.js';

const inflate = promisify(brotliDecompress);
/** Frames waiting to be read at most (a Brotli frame is inflated off the thread): past it a frame is dropped, counted. */
const MAX_QUEUED = 64;

/** What a frame came to, counted (`txgate_flashblocks_frames_total{kind}`). */
export const FRAME_KINDS = ['read', 'gap', 'garbage', 'too_big', 'unknown_payload', 'out_of_order', 'stray_receipt', 'dropped'] as const;
export type FrameKind = (typeof FRAME_KINDS)[number];

export class FlashblocksStream extends SliceFeed {
  connected = false;
  stalled = false;
  readonly counts: Record<FrameKind, number> = Object.fromEntries(FRAME_KINDS.map((k) => [k, 0])) as Record<FrameKind, number>;
  reconnects = 0;
  private readonly building = new Building();
  private readonly label: string;
  private ws: WebSocket | null = null;
  private opened = false;
  private closed = false;
  private readonly backoff = new Backoff();
  private retry: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  /** performance.now() of the last slice read, or of the stream's opening before the first. */
  private lastSlice = 0;
  /** The queue frames are read through, in order, and its length. */
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  /** Transactions of the block being built read so far, or -1 once a slice was missed (their places unknown). */
  private placed = 0;

  constructor(
    chainId: number,
    private readonly config: FlashblocksConfig,
    log: Logger,
  ) {
    super(chainId, log);
    this.label = config.url === null ? '' : upstreamLabel(config.url);
  }

  /** What /ready says of it, or null. */
  get problem(): string | null {
    if (!this.opened || !this.stalled) return null;
    return this.connected
      ? `the flashblocks stream sent no slice for ${this.config.stallMs} ms: preconfirmations wait for it (outcomes come from the sealed blocks)`
      : 'the flashblocks stream is not connected: preconfirmations wait for it (outcomes come from the sealed blocks)';
  }

  /** Opens the stream (once): the subscribers' first call does. */
  override open(): void {
    if (this.opened || this.closed || this.config.url === null) return;
    this.opened = true;
    this.lastSlice = performance.now();
    this.watchdog = setInterval(() => this.checkStall(), Math.max(50, Math.floor(this.config.stallMs / 4)));
    this.watchdog.unref();
    this.connect();
  }

  private connect(): void {
    if (this.closed) return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.config.url!, { maxPayload: this.config.maxFrameBytes, perMessageDeflate: false, handshakeTimeout: 5_000 });
    } catch (e) {
      // The error's name only: its message may quote the URL, whose path or query can hold a key.
      this.log.warn({ chainId: this.chainId, stream: this.label, error: e instanceof Error ? e.name : typeof e }, 'flashblocks stream: cannot connect');
      this.again();
      return;
    }
    this.ws = ws;
    this.building.reset();
    this.placed = -1;
    ws.on('open', () => {
      if (this.ws !== ws) return;
      this.connected = true;
      this.backoff.reset();
      this.log.info({ chainId: this.chainId, stream: this.label }, 'flashblocks stream connected');
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => this.frame(ws, data, isBinary));
    // 'error' comes before 'close' (a frame past maxPayload: 1009); the close reconnects.
    ws.on('error', (e: Error & { code?: string }) => {
      if (e.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.counts.too_big++;
    });
    ws.on('close', () => this.lost(ws));
  }

  /** One frame, queued to be read in order; any failure of it is counted, never thrown. */
  private frame(ws: WebSocket, data: Buffer, isBinary: boolean): void {
    if (this.ws !== ws) return;
    if (this.queued >= MAX_QUEUED) {
      this.counts.dropped++;
      return;
    }
    this.queued++;
    this.tail = this.tail.then(async () => {
      try {
        const text = await this.textOf(data, isBinary);
        if (text !== null && this.ws === ws) this.read(text);
      } catch (e) {
        this.counts.garbage++;
        this.log.warn({ chainId: this.chainId, err: e }, 'flashblocks stream: a frame could not be read');
      } finally {
        this.queued--;
      }
    });
  }

  /**
   * A frame's JSON text: a text frame's, a binary frame of JSON's, or a Brotli frame inflated
   * within the bound; null (counted) otherwise. A binary frame that starts with `{` is JSON: a
   * Brotli stream whose first byte is 0x7b is an empty one (window 22, its last meta-block empty).
   */
  private async textOf(data: Buffer, isBinary: boolean): Promise<string | null> {
    if (!isBinary || data[0] === 0x7b) return data.toString('utf8');
    try {
      const out = await inflate(data, { maxOutputLength: this.config.maxFrameBytes });
      return out.toString('utf8');
    } catch (e) {
      if ((e as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') this.counts.too_big++;
      else this.counts.garbage++;
      return null;
    }
  }

  private read(text: string): void {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      this.counts.garbage++;
      return;
    }
    const s = readSlice(v);
    if (s === null) {
      this.counts.garbage++;
      return;
    }
    const placed = this.building.place(s);
    if (placed.kind !== 'read') {
      this.counts[placed.kind]++;
      return;
    }
    if (s.index === 0) this.placed = 0;
    else if (placed.gap) this.placed = -1;
    this.counts[placed.gap ? 'gap' : 'read']++;
    this.lastSlice = performance.now();
    if (this.stalled) this.unstall();
    const seenAt = Date.now();
    const txs: Preconf[] = [];
    const hashes = new Set<string>();
    for (const raw of s.txs) {
      const hash = '0x' + Buffer.from(keccak256(Buffer.from(raw.slice(2), 'hex'))).toString('hex');
      hashes.add(hash);
      const position = this.placed < 0 ? null : this.placed++;
      txs.push({ hash, number: placed.number, index: s.index, position, receipt: receiptOf(s.receipts, hash), seenAt });
    }
    if (s.receipts !== null) for (const h of Object.keys(s.receipts)) if (!hashes.has(h.toLowerCase())) this.counts.stray_receipt++;
    const slice: SliceRead = { number: placed.number, index: s.index, txs };
    this.publish(slice);
  }

  private checkStall(): void {
    if (this.closed || this.stalled || performance.now() - this.lastSlice < this.config.stallMs) return;
    this.stalled = true;
    this.log.warn({ chainId: this.chainId, stream: this.label, stallMs: this.config.stallMs, connected: this.connected }, 'flashblocks stream stalled');
    // A connection silent that long may be dead without knowing it: opened again.
    this.ws?.terminate();
  }

  private unstall(): void {
    this.stalled = false;
    this.log.info({ chainId: this.chainId, stream: this.label }, 'flashblocks stream: slices again');
  }

  private lost(ws: WebSocket): void {
    if (this.ws !== ws) return;
    this.ws = null;
    if (this.connected) this.log.warn({ chainId: this.chainId, stream: this.label }, 'flashblocks stream lost: reconnecting');
    this.connected = false;
    this.again();
  }

  private again(): void {
    if (this.closed) return;
    this.reconnects++;
    const ms = this.backoff.next();
    this.retry = setTimeout(() => this.connect(), ms);
    this.retry.unref();
  }

  close(): void {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    if (this.watchdog !== null) clearInterval(this.watchdog);
    this.connected = false;
    const ws = this.ws;
    this.ws = null;
    ws?.terminate();
  }
}
