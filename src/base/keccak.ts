/**
 * keccak-256 (Ethereum's: the original Keccak padding, 0x01 … 0x80) in a WebAssembly function of
 * our own, its bytes written out below at start-up: the 1600-bit state in 25 i64 locals, each
 * round's θ, ρ, π, χ and ι written out lane by lane (the round constants and rotation offsets
 * computed from Keccak's definitions, not typed in), the input copied into the module's memory
 * once and the digest read from it where it lies. Against hash-wasm's keccak (a loop over
 * tables, and per call a view, a copy and a result array made in JavaScript), a transaction's
 * hash costs a fraction of the instructions (docs/performance.md, "The hot path against its
 * limit"). Checked against hash-wasm and the published digests (test/unit/keccak.test.ts).
 */

/** What this file uses of WebAssembly (the project's type libraries do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { readonly exports: Record<string, unknown> };
};

/** Keccak-256's rate: 136 bytes absorbed per permutation. */
const RATE = 136;
/** Memory layout: the digest at 0, the 24 round constants at 64, the input from 256. */
const OUT = 0;
const RC_AT = 64;
const IN = 256;
const PAGE = 65536;

/** The 24 round constants of Keccak-f[1600] (ι), from its LFSR (x⁸ + x⁶ + x⁵ + x⁴ + 1). */
function roundConstants(): bigint[] {
  const rc = (t: number): number => {
    if (t % 255 === 0) return 1;
    let r = 1;
    for (let i = 1; i <= t % 255; i++) {
      r <<= 1;
      if (r & 0x100) r ^= 0x171;
    }
    return r & 1;
  };
  return Array.from({ length: 24 }, (_, i) => {
    let c = 0n;
    for (let j = 0; j <= 6; j++) if (rc(j + 7 * i) === 1) c |= 1n << BigInt((1 << j) - 1);
    return c;
  });
}

/** ρ's rotation of lane x + 5y. */
function rotations(): number[] {
  const r = new Array<number>(25).fill(0);
  let x = 1;
  let y = 0;
  for (let t = 0; t < 24; t++) {
    r[x + 5 * y] = (((t + 1) * (t + 2)) / 2) % 64;
    [x, y] = [y, (2 * x + 3 * y) % 5];
  }
  return r;
}

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
};
const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
};
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s, 'latin1')];

// Opcodes used.
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const I32_CONST = 0x41;
const I64_CONST = 0x42;
const I64_LOAD = 0x29;
const I64_STORE = 0x37;
const I64_AND = 0x83;
const I64_XOR = 0x85;
const I64_ROTL = 0x89;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I32_NE = 0x47;
const LOOP = 0x03;
const BR_IF = 0x0d;
const END = 0x0b;
const VOID = 0x40;

/** The module: `h(blocks)` absorbs `blocks` padded blocks from IN and writes the digest at OUT. */
function moduleBytes(): Uint8Array {
  // Locals: 0 the block count (the parameter, at least 1: the padding makes a block), 1 the input pointer, 2 the round's byte offset,
  // then the state a[25], the lanes after ρ and π b[25], the column parities c[5], and d.
  const P = 1;
  const R = 2;
  const A = 3;
  const B = A + 25;
  const C = B + 25;
  const D = C + 5;
  const rot = rotations();
  const code: number[] = [];
  const get = (i: number) => code.push(LOCAL_GET, i);
  const set = (i: number) => code.push(LOCAL_SET, i);
  code.push(I32_CONST, ...sleb(IN));
  set(P);
  code.push(LOOP, VOID);
  // Absorb a block: 17 lanes, little-endian.
  for (let i = 0; i < RATE / 8; i++) {
    get(A + i);
    get(P);
    code.push(I64_LOAD, 3, ...uleb(8 * i), I64_XOR);
    set(A + i);
  }
  code.push(I32_CONST, 0);
  set(R);
  code.push(LOOP, VOID);
  // θ
  for (let x = 0; x < 5; x++) {
    get(A + x);
    for (let y = 1; y < 5; y++) {
      get(A + x + 5 * y);
      code.push(I64_XOR);
    }
    set(C + x);
  }
  for (let x = 0; x < 5; x++) {
    get(C + ((x + 4) % 5));
    get(C + ((x + 1) % 5));
    code.push(I64_CONST, 1, I64_ROTL, I64_XOR);
    set(D);
    for (let y = 0; y < 5; y++) {
      get(A + x + 5 * y);
      get(D);
      code.push(I64_XOR);
      set(A + x + 5 * y);
    }
  }
  // ρ and π: b[y, 2x + 3y] = rotl(a[x, y], r[x, y])
  for (let x = 0; x < 5; x++)
    for (let y = 0; y < 5; y++) {
      get(A + x + 5 * y);
      if (rot[x + 5 * y] !== 0) code.push(I64_CONST, ...sleb(rot[x + 5 * y]!), I64_ROTL);
      set(B + y + 5 * ((2 * x + 3 * y) % 5));
    }
  // χ: a[x, y] = b[x, y] ^ (~b[x + 1, y] & b[x + 2, y])
  for (let y = 0; y < 5; y++)
    for (let x = 0; x < 5; x++) {
      get(B + x + 5 * y);
      get(B + ((x + 1) % 5) + 5 * y);
      code.push(I64_CONST, ...sleb(-1), I64_XOR);
      get(B + ((x + 2) % 5) + 5 * y);
      code.push(I64_AND, I64_XOR);
      set(A + x + 5 * y);
    }
  // ι
  get(A);
  get(R);
  code.push(I64_LOAD, 3, ...uleb(RC_AT), I64_XOR);
  set(A);
  get(R);
  code.push(I32_CONST, 8, I32_ADD);
  set(R);
  get(R);
  code.push(I32_CONST, ...sleb(24 * 8), I32_NE, BR_IF, 0, END);
  // Next block.
  get(P);
  code.push(I32_CONST, ...sleb(RATE), I32_ADD);
  set(P);
  get(0);
  code.push(I32_CONST, 1, I32_SUB);
  set(0);
  get(0);
  code.push(BR_IF, 0, END);
  // The digest: the first four lanes, little-endian.
  for (let i = 0; i < 4; i++) {
    code.push(I32_CONST, 0);
    get(A + i);
    code.push(I64_STORE, 3, ...uleb(OUT + 8 * i));
  }
  code.push(END);
  const I32 = 0x7f;
  const I64 = 0x7e;
  const locals = vec([
    [2, I32],
    [...uleb(D - A + 1), I64],
  ]);
  const body = [...locals, ...code];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([[0x60, 1, I32, 0]])),
    ...section(3, vec([[0]])),
    ...section(5, vec([[0x00, 1]])),
    ...section(
      7,
      vec([
        [...name('h'), 0x00, 0],
        [...name('m'), 0x02, 0],
      ]),
    ),
    ...section(10, vec([[...uleb(body.length), ...body]])),
  ]);
}

/** One keccak-256 instance: its memory, where the input is copied and the digest read. */
export class Keccak256 {
  private readonly h: (blocks: number) => void;
  private readonly memory: WasmMemory;
  private mem!: Uint8Array;
  private buf!: Buffer;
  private capacity = 0;

  constructor() {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(moduleBytes()));
    this.h = instance.exports.h as (blocks: number) => void;
    this.memory = instance.exports.m as WasmMemory;
    this.views();
    const rc = roundConstants();
    for (let i = 0; i < 24; i++) this.buf.writeBigUInt64LE(rc[i]!, RC_AT + 8 * i);
  }

  private views(): void {
    this.mem = new Uint8Array(this.memory.buffer);
    this.buf = Buffer.from(this.memory.buffer);
    this.capacity = this.mem.length - IN - RATE;
  }

  /** Room for `len` input bytes (the memory grown when needed: a larger input than any before). */
  private room(len: number): Uint8Array {
    if (len > this.capacity) {
      this.memory.grow(Math.ceil((len - this.capacity) / PAGE));
      this.views();
    }
    return this.mem;
  }

  /** Pads the `len` bytes at IN and hashes them: the digest is at OUT. */
  private run(len: number): void {
    const mem = this.mem;
    const full = len - (len % RATE) + RATE;
    mem.fill(0, IN + len, IN + full);
    mem[IN + len] = 0x01;
    mem[IN + full - 1]! |= 0x80;
    this.h(full / RATE);
  }

  /** keccak-256 of `data`, a new array. */
  digest(data: Uint8Array): Uint8Array {
    this.room(data.length).set(data, IN);
    this.run(data.length);
    return this.mem.slice(OUT, OUT + 32);
  }

  /** keccak-256 of the concatenation of parts, without concatenating them. */
  digestParts(a: Uint8Array, b: Uint8Array, c: Uint8Array): Uint8Array {
    const len = a.length + b.length + c.length;
    const mem = this.room(len);
    mem.set(a, IN);
    mem.set(b, IN + a.length);
    mem.set(c, IN + a.length + b.length);
    this.run(len);
    return this.mem.slice(OUT, OUT + 32);
  }

  /** keccak-256 of `data` as a transaction hash is written: 0x and 64 lower-case hex digits. */
  hex(data: Uint8Array): string {
    this.room(data.length).set(data, IN);
    this.run(data.length);
    return '0x' + this.buf.toString('hex', OUT, OUT + 32);
  }
}
