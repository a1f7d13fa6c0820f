/**
 * One sequencer as the outcome rules see it: a client of any kind of upstream (src/upstreams/),
 * and its slot on the process-wide health board, read and written here, so every client of one
 * sequencer (the plain send's, the sync send's, the prober's) agrees on every thread.
 */
import type { Answer, CallTimes, Upstream } from '../upstreams/upstream.js';

export type SequencerHealth = 'unknown' | 'up' | 'down';

/** The sequencers' health as the sends read and write it: the process-wide board (src/health/board.ts). */
export interface HealthSlots {
  /** Not 'down': it may be sent to (unknown counts until probed). */
  eligible(slot: number): boolean;
  /** Records a verdict; returns the state before it. */
  set(slot: number, state: SequencerHealth, problem: string): SequencerHealth;
}

export class Sequencer implements Upstream {
  readonly url: string;
  readonly label: string;
  /** The label as a JSON string, for log lines. */
  readonly labelJson: string;

  constructor(
    readonly client: Upstream,
    private readonly board: HealthSlots,
    readonly slot: number,
  ) {
    this.url = client.url;
    this.label = client.label;
    this.labelJson = client.labelJson;
  }

  /** Not taken out by the health board. */
  get eligible(): boolean {
    return this.board.eligible(this.slot);
  }

  /** Takes the sequencer out on every thread until a probe sees it back. */
  markDown(why: string): void {
    this.board.set(this.slot, 'down', why);
  }

  /** A probe's verdict; returns the state before it. */
  report(state: SequencerHealth, problem: string): SequencerHealth {
    return this.board.set(this.slot, state, problem);
  }

  call(method: string, paramsJson: string, times: CallTimes): Promise<Answer> {
    return this.client.call(method, paramsJson, times);
  }

  close(abandon?: boolean): Promise<void> {
    return this.client.close(abandon);
  }
}
