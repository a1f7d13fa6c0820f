/**
 * Busy polling (opt-in, `busyPoll: true`): a thread at the lowest CPU priority (nice 19) spins
 * beside each server thread while traffic is flowing, so that the core never goes idle.
 *
 * Why: on a virtual machine an idle vCPU halts, and waking it (a request arriving, a sequencer
 * answering) costs tens to hundreds of microseconds, paid on every request that finds the
 * core idle. On the bench machine it lowered the p50 latency txgate adds at ~1,000 req/s in
 * every run, by amounts that vary widely from run to run, and saturated throughput does not
 * change (docs/performance.md has the measured figures). The price is CPU: while traffic flows, the idle share of the core is
 * burnt instead of saved. At nice 19 the spinner yields to the server thread (CFS weight 15
 * against 1024), and it parks after `idleMs` without a request, so an idle service burns nothing.
 *
 * The spinner refuses to spin if it cannot lower its own priority (it would compete with the
 * server for the core): it then reports the problem and exits.
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/**
 * The CPU quota of this process's cgroup (v2 `cpu.max`, v1 `cpu.cfs_quota_us`), or null when
 * unlimited or unknown. Under a quota a spinner spends the quota itself, whatever its priority,
 * and the kernel then throttles the server threads too: busy polling is refused there.
 */
export function cpuQuota(root = '/sys/fs/cgroup'): string | null {
  try {
    const v2 = readFileSync(`${root}/cpu.max`, 'utf8').trim();
    return v2.startsWith('max') ? null : v2;
  } catch {
    /* not cgroup v2 at this root */
  }
  try {
    const v1 = readFileSync(`${root}/cpu/cpu.cfs_quota_us`, 'utf8').trim();
    return v1 === '-1' ? null : `cfs_quota_us ${v1}`;
  } catch {
    return null;
  }
}

const SPINNER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readlinkSync } = require('node:fs');
const os = require('node:os');
const s = new Int32Array(workerData.state); // [0] stop, [1] activity count, [2] parked
let tid = 0;
try {
  tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  os.setPriority(tid, 19);
  if (os.getPriority(tid) !== 19) throw new Error('priority not applied');
} catch (e) {
  parentPort.postMessage({ kind: 'refused', why: String(e && e.message || e) });
  process.exit(0);
}
parentPort.postMessage({ kind: 'spinning', tid });
let last = Atomics.load(s, 1);
let changed = Date.now();
while (Atomics.load(s, 0) === 0) {
  for (let i = 0; i < 20000; i++);
  const v = Atomics.load(s, 1);
  if (v !== last) { last = v; changed = Date.now(); continue; }
  if (Date.now() - changed < workerData.idleMs) continue;
  Atomics.store(s, 2, 1);
  Atomics.wait(s, 1, v, 1000); // woken by the next request (or re-checks each second)
  Atomics.store(s, 2, 0);
  last = Atomics.load(s, 1);
  changed = Date.now();
}
`;

export interface BusyPollStatus {
  readonly spinning: boolean;
  readonly parked: boolean;
  /** Why it does not spin (priority could not be lowered), if so. */
  readonly refused?: string;
}

export class BusyPoll {
  private readonly state = new Int32Array(new SharedArrayBuffer(12));
  private readonly worker: Worker;
  private spinningTid = 0;
  private refused: string | undefined;
  /** Resolves once the spinner has started spinning or refused. */
  readonly started: Promise<void>;

  constructor(opts: { idleMs?: number; onRefused?: (why: string) => void } = {}) {
    this.worker = new Worker(SPINNER, { eval: true, workerData: { state: this.state.buffer, idleMs: opts.idleMs ?? 1000 } });
    this.worker.unref();
    this.started = new Promise((resolve) => {
      this.worker.on('message', (m: { kind: string; tid?: number; why?: string }) => {
        if (m.kind === 'spinning') this.spinningTid = m.tid!;
        else {
          this.refused = m.why ?? 'refused';
          opts.onRefused?.(this.refused);
        }
        resolve();
      });
      this.worker.once('exit', () => resolve());
    });
  }

  /** One per request on the hot path: keeps the spinner going, and wakes it if parked. */
  touch(): void {
    const s = this.state;
    Atomics.add(s, 1, 1);
    if (Atomics.load(s, 2) === 1) Atomics.notify(s, 1, 1);
  }

  status(): BusyPollStatus {
    return {
      spinning: this.spinningTid !== 0 && this.refused === undefined,
      parked: Atomics.load(this.state, 2) === 1,
      ...(this.refused !== undefined ? { refused: this.refused } : {}),
    };
  }

  /** The spinner's thread id (0 until it spins): its priority can be checked with os.getPriority. */
  get tid(): number {
    return this.spinningTid;
  }

  async stop(): Promise<void> {
    Atomics.store(this.state, 0, 1);
    Atomics.notify(this.state, 1);
    await this.worker.terminate();
  }
}
