/**
 * Rehearsal (config `rehearsal.everyMs`; off unless a deployment sets it): a server thread idle
 * for `everyMs` runs one submission of its own through its whole path, so that the first order
 * after a silence runs on a path as warm as the thousandth's (docs/performance.md, "A silence that
 * costs nothing", has the figures).
 *
 * Why: on a shared host, code and data a thread has not used for a while are slow to use again
 * (out of the caches, the predictors and the TLBs; on a virtual machine the host may have taken
 * the mappings back): `bench/drivers/cold-probe.ts` reads a fixed piece of work 2x slower after
 * 10 ms asleep and 5 to 100x after a second, depending on the host. Keep-warm keeps a sequencer's
 * connection open (upstreams/keep-warm.ts), a client's keep-alive runs the front end; neither runs
 * a submission's stages, its forward or its answer, and only running them keeps them warm.
 *
 * How, on each server thread (`Rehearsal.start`, after the public port listens):
 * - a private listener on 127.0.0.1 (a port of its own, never the public one) serves POST / with
 *   the same front end and the same stages as the public port, over parts of its own: a host table,
 *   an account store that knows only the rehearsal's account (account.ts: a random key made now,
 *   never written anywhere), and per chain a forwarder whose one sequencer is the sink on that
 *   listener (sink.ts), over HTTP or WebSocket as the chain's first sequencer is;
 * - every `everyMs`, when no request reached the public port since the last look and the last
 *   rehearsal has ended, a client on this thread (client.ts) posts one rehearsal (a tipped EIP-1559 transfer
 *   signed at start by a random key; the chains in turn) and checks that its answer is its hash.
 *
 * What it never does: send to a sequencer, a chain RPC or an express lane (its chains have only
 * the sink), write a request or audit line or count in the metrics (its front end logs to nowhere
 * and has no observer), take a rate-limit token or a duplicate-table entry of a real account (its
 * limiter and tables are its own), or delay a request for longer than one of its steps (each runs
 * between the thread's other events). A rehearsal not answered with its hash three times in a row
 * stops them on this thread, said once with the answer.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import type { Config, ChainConfig } from '../config/config.js';
import { buildChains, HostTable } from '../config/chains.js';
import { uws } from '../base/native.js';
import type { BodyBudget } from '../http/body-budget.js';
import { portParts } from '../http/port.js';
import { HttpFrontEnd } from '../http/server.js';
import { createTipAddressesHandler } from '../http/tip-addresses.js';
import type { Readiness } from '../front/readiness.js';
import { ChainLink } from '../forward/chain-link.js';
import { ChainDuplicates, Duplicates } from '../forward/dedup.js';
import { ChainForwarder } from '../forward/forwarder.js';
import { HealthBoard } from '../health/board.js';
import { RateLimiter } from '../limits/rate-limiter.js';
import { createLogger, type Logger } from '../log/log.js';
import type { PipelineHooks } from '../pipeline/pipeline.js';
import { createForwardStage } from '../stages/forward.js';
import { admissionStages } from '../stages/list.js';
import type { TxDecoder } from '../tx/decoder.js';
import { sign1559 } from '../dev/sign.js';
import { rehearsalAccount } from './account.js';
import type { Activity } from './activity.js';
import { RehearsalClient } from './client.js';
import { hashOfRaw, registerSink, SINK_PATH } from './sink.js';

export interface RehearsalParts {
  readonly config: Config;
  /** The thread's logger: the one warning when rehearsals stop. */
  readonly log: Logger;
  readonly decoders: ReadonlyMap<number, TxDecoder>;
  readonly readiness: Readiness;
  readonly bodies: BodyBudget;
  /** The public front ends' requests (idle: unchanged since the last look). */
  readonly activity: Activity;
}

/** One chain's rehearsal: what is posted and what must come back. */
interface Part {
  readonly chain: ChainConfig;
  /** The whole HTTP request, as a client writes it. */
  readonly request: Buffer;
  /** What its answer's body holds when it is its hash. */
  readonly expect: string;
}

/** A rehearsal not answered in this long is ended, failed (its forward's bound is seconds). */
const HUNG_MS = 30_000;

/** Answers not the rehearsal's hash in a row that stop the rehearsals on a thread. */
const FAILURES_TO_STOP = 3;

/** The chains a rehearsal can run on: with a Host to name them, and EIP-1559 (what it signs). */
const rehearsable = (c: ChainConfig, decoders: ReadonlyMap<number, TxDecoder>): boolean =>
  c.hosts.length > 0 && decoders.get(c.chainId)?.common.isActivatedEIP(1559) === true;

/** A chain as the rehearsal forwards on it: its forward's own settings, and the sink as its one sequencer. */
function sinkChain(c: ChainConfig, port: number): ChainConfig {
  const scheme = /^wss?:/i.test(c.sequencers[0] ?? '') ? 'ws' : 'http';
  return {
    ...c,
    sequencers: [`${scheme}://127.0.0.1:${port}${SINK_PATH}`],
    rpc: null,
    rpcWs: null,
    expressLane: { ...c.expressLane, enabled: false },
    sync: { ...c.sync, enabled: false },
    conditional: { ...c.conditional, enabled: false },
    forward: { ...c.forward, keepWarm: { ...c.forward.keepWarm, idleMs: 0 } },
  };
}

export class Rehearsal {
  /** Rehearsals answered with their hash, and not, on this thread. */
  readonly counts = { answered: 0, failed: 0 };
  private readonly duplicates: Duplicates;
  private readonly parts: readonly Part[];
  private readonly app: TemplatedApp;
  private readonly forwarders = new Map<number, ChainForwarder>();
  private listenSocket: us_listen_socket | null = null;
  private client: RehearsalClient | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** When the running rehearsal was posted (performance.now()). */
  private startedAt = 0;
  /** The rehearsal's own lines (its front end's, its forwarders'): made as a request's are, written nowhere. */
  private readonly quiet: Logger;
  private stopped = false;
  private seen = -1;
  private next = 0;
  private failuresInRow = 0;

  /** The rehearsal of a thread, or null where it is off or no chain can be rehearsed (said once). */
  static of(p: RehearsalParts): Rehearsal | null {
    if (p.config.rehearsal.everyMs === 0) return null;
    const chains = p.config.chains.filter((c) => rehearsable(c, p.decoders));
    const left = p.config.chains.filter((c) => !chains.includes(c)).map((c) => c.chainId);
    if (left.length > 0) p.log.warn({ chains: left }, 'rehearsal: not on these chains (no host, or no EIP-1559 on their fork)');
    return chains.length === 0 ? null : new Rehearsal(p, chains);
  }

  private constructor(
    private readonly p: RehearsalParts,
    chains: readonly ChainConfig[],
  ) {
    const config = p.config;
    const account = rehearsalAccount(chains.map((c) => c.chainId));
    const signer = `0x${randomBytes(32).toString('hex')}`;
    this.parts = chains.map((chain) => {
      const raw = sign1559(
        {
          chainId: chain.chainId,
          nonce: 0,
          maxPriorityFeePerGas: 1_000_000_000n,
          maxFeePerGas: 3_000_000_000n,
          gas: 21_000n,
          to: account.tipAddress,
          value: account.tipWei,
        },
        signer,
      );
      const body = `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["${raw}"]}`;
      const head = `POST / HTTP/1.1\r\nHost: ${chain.hosts[0]!}\r\nContent-Type: application/json\r\nX-Api-Key: ${account.key}\r\nContent-Length: ${body.length}\r\n\r\n`;
      return { chain, request: Buffer.from(head + body, 'latin1'), expect: `"result":"${hashOfRaw(raw)}"` };
    });
    const runtimes = buildChains(config).filter((r) => chains.some((c) => c.chainId === r.chainId));
    const hosts = new HostTable(runtimes);
    const duplicates = new Duplicates(new Map(chains.map((c) => [c.chainId, new ChainDuplicates({ acceptedTtlMs: 1, maxEntries: 64 })])));
    this.duplicates = duplicates;
    // The public port's request and audit lines, made as they are and written nowhere.
    const quiet = createLogger({ level: config.log.level, destination: { write: () => {} } });
    this.quiet = quiet;
    const buildPipeline = (hooks: PipelineHooks) =>
      admissionStages({ config, hosts, store: account.store, decoders: p.decoders, limiter: new RateLimiter(), duplicates }).end(
        createForwardStage(this.forwarders),
        hooks,
      );
    const front = new HttpFrontEnd({
      port: portParts(quiet, p.readiness, 'rehearsal'),
      buildPipeline,
      bodies: p.bodies,
      tipAddresses: createTipAddressesHandler({ store: account.store, hosts, allowUntipped: false, maxAgeSeconds: 0 }),
    });
    this.app = uws().App();
    registerSink(this.app);
    front.register(this.app);
  }

  /** Listens, opens the forwarders to the sink and the client, and starts looking. */
  async start(): Promise<void> {
    const socket = await new Promise<us_listen_socket | false>((done) => this.app.listen('127.0.0.1', 0, done));
    if (socket === false) throw new Error('rehearsal: could not listen on 127.0.0.1');
    this.listenSocket = socket;
    const port = uws().us_socket_local_port(socket);
    const board = HealthBoard.allocate(1);
    for (const { chain } of this.parts) {
      const link = new ChainLink({ chain: sinkChain(chain, port), board, slots: [0], log: this.quiet });
      this.forwarders.set(chain.chainId, new ChainForwarder(link, this.duplicates.forChain(chain.chainId)));
    }
    this.client = new RehearsalClient(port);
    this.timer = setInterval(() => this.look(), this.p.config.rehearsal.everyMs);
    this.timer.unref();
  }

  /** One look: a rehearsal when the thread was idle since the last one and none is running. */
  private look(): void {
    const count = this.p.activity.count;
    const idle = count === this.seen;
    this.seen = count;
    if (this.running) {
      // Every rehearsal is answered within its forward's bound; one that is not ends here, failed.
      if (performance.now() - this.startedAt > HUNG_MS) this.client?.close();
      return;
    }
    if (!idle || this.stopped || this.p.readiness.draining) return;
    const part = this.parts[this.next++ % this.parts.length]!;
    this.running = true;
    this.startedAt = performance.now();
    this.client!.send(part.request, part.expect).then(this.ended);
  }

  private readonly ended = (problem: string | null): void => {
    this.running = false;
    if (this.stopped) return;
    if (problem === null) {
      this.counts.answered++;
      this.failuresInRow = 0;
      return;
    }
    this.counts.failed++;
    if (++this.failuresInRow < FAILURES_TO_STOP) return;
    this.p.log.warn({ answer: problem }, `rehearsal: ${FAILURES_TO_STOP} rehearsals in a row not answered with their hash; stopped on this thread`);
    void this.stop();
  };

  /** Stops looking, and closes the client, the forwarders and the listener (never throws: a part that fails to close is left to the process's end). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.client?.close();
    await Promise.allSettled([...this.forwarders.values()].map((f) => f.close()));
    if (this.listenSocket !== null) uws().us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
  }
}
