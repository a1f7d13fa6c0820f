/**
 * Sequencer health: one prober per process asks each sequencer eth_chainId on an interval (on
 * a connection of its own, so a busy pool never delays a probe); the answer must be the
 * chain's id. Verdicts go to the process-wide HealthBoard, which every thread's forwarder and
 * readiness read. Transitions are logged; readiness fails while a chain has no sequencer up.
 */
import type { ChainConfig } from '../config/config.js';
import type { Logger } from '../log/log.js';
import { upstreamLabel } from '../upstreams/upstream.js';
import { preview } from '../forward/answer.js';
import { type ChainLink, slotIndex } from '../forward/chain-link.js';
import type { HealthBoard } from './board.js';
import type { Sequencer } from '../forward/sequencer.js';
import { CHAIN_ID_METHOD } from '../rpc/rpc-methods.js';

interface Probed {
  readonly chain: ChainConfig;
  readonly seqs: readonly Sequencer[];
}

export class HealthProber {
  private timers: NodeJS.Timeout[] = [];
  private readonly chains: readonly Probed[];

  constructor(
    /** Every chain's link: its sequencers, probed on a connection of the prober's own each. */
    links: readonly ChainLink[],
    private readonly log: Logger,
  ) {
    this.chains = links.map((link) => ({ chain: link.chain, seqs: link.open({ calls: 1, sockets: 1 }) }));
  }

  /** Probes every sequencer once now (resolves when all answered), then on each chain's interval. */
  async start(): Promise<void> {
    await this.probeAll();
    for (const p of this.chains) {
      const t = setInterval(() => void Promise.all(p.seqs.map((s) => this.probe(p.chain, s))), p.chain.probe.intervalMs);
      t.unref();
      this.timers.push(t);
    }
  }

  probeAll(): Promise<unknown> {
    return Promise.all(this.chains.flatMap((p) => p.seqs.map((s) => this.probe(p.chain, s))));
  }

  private async probe(chain: ChainConfig, s: Sequencer): Promise<void> {
    const a = await s.call(CHAIN_ID_METHOD, '[]', { timeoutMs: chain.probe.timeoutMs, queueMs: chain.probe.timeoutMs });
    let problem = '';
    if (a.kind === 'fault') problem = a.why;
    else if (a.kind === 'error') problem = `eth_chainId error ${a.code}: ${a.message.slice(0, 120)}`;
    else if (typeof a.result !== 'string' || !/^0x[0-9a-fA-F]+$/.test(a.result) || parseInt(a.result, 16) !== chain.chainId)
      problem = `eth_chainId answered ${preview(a.result).slice(0, 40)}, expected 0x${chain.chainId.toString(16)}`;
    const now = problem === '' ? 'up' : 'down';
    const before = s.report(now, problem);
    if (before !== now) {
      if (now === 'up') this.log.info({ chainId: chain.chainId, sequencer: s.label }, 'sequencer up');
      else this.log.warn({ chainId: chain.chainId, sequencer: s.label, problem }, 'sequencer down');
    }
  }

  stop(): Promise<unknown> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    return Promise.all(this.chains.flatMap((p) => p.seqs.map((s) => s.close())));
  }
}

/** Readiness problems: chains without a sequencer that answered its last probe correctly. */
export function healthProblems(chains: readonly ChainConfig[], board: HealthBoard): string | null {
  const slots = slotIndex(chains);
  const bad: string[] = [];
  chains.forEach((chain, c) => {
    const mine = slots[c]!;
    if (mine.some((slot) => board.state(slot) === 'up')) return;
    const why = chain.sequencers
      .map((u, i) => {
        const slot = mine[i]!;
        return `${upstreamLabel(u)} ${board.state(slot) === 'unknown' ? 'not probed yet' : board.problem(slot)}`;
      })
      .join('; ');
    bad.push(`chain ${chain.chainId}: no healthy sequencer (${why})`);
  });
  return bad.length === 0 ? null : bad.join(' | ');
}
