/**
 * Sequencer health: each sequencer is asked eth_chainId on an interval; the answer must be the
 * chain's id. Transitions are logged; readiness fails while a chain has no sequencer up.
 */
import type { Logger } from '../log.js';
import type { ChainForwarder } from './forwarder.js';
import type { Sequencer } from './upstream.js';

export interface HealthObserver {
  sequencerUp?(chainId: number, sequencer: string, up: boolean): void;
}

export class HealthProber {
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly forwarders: readonly ChainForwarder[],
    private readonly log: Logger,
    private readonly observer: HealthObserver = {},
  ) {}

  /** Probes every sequencer once now (resolves when all answered), then on each chain's interval. */
  async start(): Promise<void> {
    await this.probeAll();
    for (const f of this.forwarders) {
      const t = setInterval(() => void Promise.all(f.sequencers.map((s) => this.probe(f, s))), f.config.probe.intervalMs);
      t.unref();
      this.timers.push(t);
    }
  }

  probeAll(): Promise<unknown> {
    return Promise.all(this.forwarders.flatMap((f) => f.sequencers.map((s) => this.probe(f, s))));
  }

  private async probe(f: ChainForwarder, s: Sequencer): Promise<void> {
    const a = await s.call('eth_chainId', '[]', f.config.probe.timeoutMs);
    let problem = '';
    if (a.kind === 'fault') problem = a.why;
    else if (a.kind === 'error') problem = `eth_chainId error ${a.code}: ${a.message.slice(0, 120)}`;
    else if (typeof a.result !== 'string' || !/^0x[0-9a-fA-F]+$/.test(a.result) || parseInt(a.result, 16) !== f.chainId)
      problem = `eth_chainId answered ${JSON.stringify(a.result).slice(0, 40)}, expected 0x${f.chainId.toString(16)}`;
    const before = s.health;
    s.health = problem === '' ? 'up' : 'down';
    s.lastProblem = problem;
    if (before !== s.health) {
      this.observer.sequencerUp?.(f.chainId, s.label, s.health === 'up');
      if (s.health === 'up') this.log.info({ chainId: f.chainId, sequencer: s.label }, 'sequencer up');
      else this.log.warn({ chainId: f.chainId, sequencer: s.label, problem }, 'sequencer down');
    }
  }

  /** Readiness problems: chains without a sequencer that answered its last probe correctly. */
  problems(): string | null {
    const bad: string[] = [];
    for (const f of this.forwarders) {
      if (!f.sequencers.some((s) => s.health === 'up')) {
        const why = f.sequencers.map((s) => `${s.label} ${s.health === 'unknown' ? 'not probed yet' : s.lastProblem}`).join('; ');
        bad.push(`chain ${f.chainId}: no healthy sequencer (${why})`);
      }
    }
    return bad.length === 0 ? null : bad.join(' | ');
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }
}
