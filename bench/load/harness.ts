/**
 * bench:load's processes and measurements: the child servers pinned to their cores, txgate
 * started from a config through bench/common/txgate.ts, wrk runs with txgate's CPU read around
 * them, the fixed-rate latency probe, and txgate against the echo (and the floor) round by round.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMicros } from '../common/cpu.js';
import { medianBy, round } from '../common/figures.js';
import { driver, server } from '../common/paths.js';
import { startTxgate } from '../common/txgate.js';
import { gcObserverSource } from '../drivers/gc-trace.js';

export interface WrkResult {
  requests: number;
  duration_us: number;
  non2xx: number;
  socket_errors: number;
  p50: number;
  p99: number;
  p999: number;
}
export interface Measured extends WrkResult {
  rps: number;
  cpuUsPerReq: number;
}
export interface Compared {
  txgate: Measured;
  echo: Measured;
  /** The conforming floor (floor-server.ts) in the same round, for the scenarios it answers. */
  floor?: Measured;
  floorRatios?: number[];
  /** The median round's ratio; that round's figures are the ones shown. */
  ratio: number;
  ratios: number[];
}

export interface HarnessSettings {
  readonly dir: string;
  readonly children: ChildProcess[];
  readonly serverCores: string;
  readonly loadCores: string;
  readonly duration: number;
  readonly connections: number;
  readonly rounds: number;
  readonly logLevel: string;
  readonly wsConnections: number;
  /** Node options for txgate (--node-args). */
  readonly nodeArgs: readonly string[];
  /** The echo's port; the floor's is one up, the stubs' from 100 up, the txgates' from 200 up (their internal ports 1000 above). */
  readonly portBase: number;
}

/** One txgate of the bench: the options that differ between its runs. */
export interface GateOptions {
  workers?: number;
  metrics?: boolean;
  maxInFlight?: number;
  sequencer: string;
  secp256k1?: 'npm' | 'system';
  signature?: 'recover' | 'curve';
  busyPoll?: boolean;
  /** The sync send on, in this mode (receipt mode: the receipts read from `sequencer` too), no receipt held for resends. */
  sync?: 'forward' | 'receipt';
  /** Record txgate's GC pauses to this file (gc-trace.ts), written as its threads end. */
  gcOut?: string;
}

export interface Gate {
  readonly child: ChildProcess;
  readonly url: string;
  /** Its log file. */
  readonly log: string;
  readonly stop: () => Promise<void>;
}

export class Harness {
  private nextPort: number;
  /** The references every throughput round runs beside txgate (startReferences). */
  private echo: ChildProcess | undefined;
  private floor: ChildProcess | undefined;

  constructor(
    readonly s: HarnessSettings,
    private readonly accounts: unknown,
  ) {
    this.nextPort = s.portBase + 200;
  }

  readonly port = {
    echo: () => this.s.portBase,
    floor: () => this.s.portBase + 1,
    /** The stubs: n 0 on the load cores, 1 the slow one (soak), 2 and 3 on the server's core. */
    stub: (n: 0 | 1 | 2 | 3) => this.s.portBase + 100 + n,
  };

  /** A child server on `cores`, ready when it prints so. */
  start(cmd: string[], cores: string, name: string): Promise<ChildProcess> {
    const child = spawn('taskset', ['-c', cores, ...cmd], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.s.children.push(child);
    return new Promise((resolve, reject) => {
      let out = '';
      const t = setTimeout(() => reject(new Error(`${name} did not start: ${out}`)), 15_000);
      const onData = (d: Buffer) => {
        out += d.toString();
        if (out.includes('ready')) {
          clearTimeout(t);
          child.stdout!.removeListener('data', onData);
          child.stdout!.resume();
          resolve(child);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      child.once('exit', (c) => reject(new Error(`${name} exited ${c}: ${out}`)));
    });
  }

  stub(n: 0 | 1 | 2 | 3, cores: string, delayMs = 0): Promise<ChildProcess> {
    return this.start(['node', server('stub-sequencer'), String(this.port.stub(n)), ...(delayMs > 0 ? [String(delayMs)] : [])], cores, `stub ${n}`);
  }

  /** The echo and the floor on the server's core (the floor forwarding to stub 0). */
  async startReferences(key: string, tipAddress: string): Promise<void> {
    const { serverCores, dir } = this.s;
    this.echo = await this.start(['node', server('echo-server'), String(this.port.echo())], serverCores, 'echo');
    const stub = `http://127.0.0.1:${this.port.stub(0)}`;
    this.floor = await this.start(
      ['node', server('floor-server'), String(this.port.floor()), join(dir, 'floor.log'), key, stub, tipAddress, '1000000000000'],
      serverCores,
      'floor',
    );
  }

  async stopReferences(): Promise<void> {
    for (const c of [this.echo, this.floor]) if (c !== undefined) await stop(c);
  }

  /** A txgate on the server's core (`workers` cores with more threads), its log in a file. */
  async gate(o: GateOptions): Promise<Gate> {
    const { s } = this;
    const port = this.nextPort++;
    const nodeArgs = [...s.nodeArgs];
    if (o.gcOut !== undefined) {
      const pre = join(s.dir, `gc-observer-${port}.cjs`);
      writeFileSync(pre, gcObserverSource(o.gcOut));
      nodeArgs.push('--require', pre);
    }
    const cores = o.workers !== undefined && o.workers > 1 ? `0-${o.workers - 1}` : s.serverCores;
    const log = join(s.dir, `txgate-${port}.log`);
    const g = await startTxgate({
      config: {
        listen: { host: '127.0.0.1', port },
        internal: { host: '127.0.0.1', port: port + 1000 },
        workers: o.workers ?? 1,
        metrics: { enabled: o.metrics ?? true },
        crypto: { secp256k1: o.secp256k1 ?? 'npm', ...(o.signature !== undefined ? { signature: o.signature } : {}) },
        busyPoll: o.busyPoll ?? false,
        log: { level: s.logLevel },
        dedup: { acceptedTtlMs: 0 },
        chains: [
          {
            chainId: 4663,
            hosts: ['127.0.0.1', 'localhost'],
            sequencers: [o.sequencer],
            forward: { maxInFlight: o.maxInFlight ?? 4096, connections: 64, wsConnections: s.wsConnections, timeoutMs: 5000 },
            // Held receipts off, as dedup is: the pool repeats, and a resend answered from a held
            // receipt would measure the cache.
            ...(o.sync !== undefined
              ? { ...(o.sync === 'receipt' ? { rpc: o.sequencer } : {}), sync: { enabled: true, mode: o.sync, receiptTtlMs: 0, maxWaiting: 1024 } }
              : {}),
          },
        ],
      },
      accounts: this.accounts,
      prefix: ['taskset', '-c', cores],
      nodeArgs,
      // txgate's logs go to a file (as to a log shipper that keeps up).
      log,
      parent: s.dir,
      children: s.children,
      readyMs: 15_000,
    });
    return { child: g.proc, url: g.url, log, stop: () => g.stop() };
  }

  wrk(url: string, script: string, seconds = this.s.duration, connections = this.s.connections): Promise<WrkResult> {
    return new Promise((resolve, reject) => {
      const child = spawn('taskset', ['-c', this.s.loadCores, 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d));
      child.stderr.on('data', (d: Buffer) => (out += d));
      child.on('exit', () => {
        const m = /RESULT (\{.*\})/.exec(out);
        if (m === null) return reject(new Error(`wrk failed: ${out}`));
        resolve(JSON.parse(m[1]!) as WrkResult);
      });
    });
  }

  async measure(pid: number, url: string, script: string, seconds = this.s.duration, connections = this.s.connections, warm = true): Promise<Measured> {
    if (warm) await this.wrk(url, script, 1, connections); // warm-up (JIT, pools)
    const c0 = cpuMicros(pid);
    const r = await this.wrk(url, script, seconds, connections);
    const c1 = cpuMicros(pid);
    return { ...r, rps: Math.round(r.requests / (r.duration_us / 1e6)), cpuUsPerReq: round((c1 - c0) / r.requests, 1) };
  }

  /** Fixed-rate latency probe: one keep-alive connection, one request every 1/rate s. */
  probe(url: string, bodies: string[], headers: Record<string, string>, rate: number, seconds: number): { p50: number; p99: number; n: number } {
    const input = join(this.s.dir, `probe-${Date.now()}.json`);
    writeFileSync(input, JSON.stringify({ url, bodies, headers, rate, seconds }));
    const r = spawnSync('taskset', ['-c', this.s.loadCores, 'node', driver('latency-probe'), input], { encoding: 'utf8' });
    const m = /RESULT (\{.*\})/.exec(r.stdout);
    if (m === null) throw new Error(`probe failed: ${r.stdout}${r.stderr}`);
    return JSON.parse(m[1]!);
  }

  /**
   * txgate against the echo (and the floor, `withFloor`), alternating `rounds` times (echo, floor,
   * txgate, echo, …): the machine's speed drifts within seconds, and one pair of runs can miss by
   * ±10%. The round with the median txgate/echo ratio is reported, with the range of all rounds.
   */
  async compare(gatePid: number, gateUrl: string, script: string, withFloor = false): Promise<Compared> {
    const { duration, connections } = this.s;
    const runs: { e: Measured; f?: Measured; t: Measured; ratio: number }[] = [];
    for (let i = 0; i < this.s.rounds; i++) {
      const e = await this.measure(this.echo!.pid!, `http://127.0.0.1:${this.port.echo()}/`, script, duration, connections, i === 0);
      const f = withFloor ? await this.measure(this.floor!.pid!, `http://127.0.0.1:${this.port.floor()}/`, script, duration, connections, i === 0) : undefined;
      const t = await this.measure(gatePid, gateUrl, script, duration, connections, i === 0);
      runs.push({ e, ...(f !== undefined ? { f } : {}), t, ratio: round(t.rps / e.rps, 3) });
    }
    const mid = medianBy(runs, (r) => r.ratio);
    const floorPart = mid.f !== undefined ? { floor: mid.f, floorRatios: runs.map((r) => round(r.f!.rps / r.e.rps, 3)) } : {};
    return { txgate: mid.t, echo: mid.e, ratio: mid.ratio, ratios: runs.map((r) => r.ratio), ...floorPart };
  }
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
  child.kill('SIGKILL');
}

export function rssMB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}
