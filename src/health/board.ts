/**
 * One view of sequencer health per process: a SharedArrayBuffer every thread reads and writes,
 * so readiness and forwarding agree on every thread. The prober (one per process) writes each
 * probe's verdict; a forward on any thread that meets a transport error takes the sequencer
 * out for all of them at once, until the next probe sees it back.
 *
 * A slot per sequencer, in configuration order (chain by chain): its state, a version bumped on
 * every write, and the last problem as UTF-8 text (bounded, never a secret: the sequencer's
 * label carries no credentials).
 */
import type { HealthSlots, SequencerHealth } from '../forward/sequencer.js';

const STATES: readonly SequencerHealth[] = ['unknown', 'up', 'down'];
const PROBLEM_BYTES = 240;
/** Int32 words per slot: state, version, problem length. */
const WORDS = 3;

export interface HealthBoardBuffers {
  readonly words: SharedArrayBuffer;
  readonly text: SharedArrayBuffer;
  readonly slots: number;
}

export class HealthBoard implements HealthSlots {
  private readonly words: Int32Array;
  private readonly text: Uint8Array;
  readonly buffers: HealthBoardBuffers;

  constructor(buffers: HealthBoardBuffers) {
    this.buffers = buffers;
    this.words = new Int32Array(buffers.words);
    this.text = new Uint8Array(buffers.text);
  }

  static allocate(slots: number): HealthBoard {
    return new HealthBoard({ words: new SharedArrayBuffer(slots * WORDS * 4), text: new SharedArrayBuffer(slots * PROBLEM_BYTES), slots });
  }

  state(slot: number): SequencerHealth {
    return STATES[Atomics.load(this.words, slot * WORDS)]!;
  }

  /** Not 'down': the forwarder may send to it (unknown counts as eligible until probed). */
  eligible(slot: number): boolean {
    return Atomics.load(this.words, slot * WORDS) !== 2;
  }

  problem(slot: number): string {
    const len = Atomics.load(this.words, slot * WORDS + 2);
    return Buffer.from(this.text.buffer, slot * PROBLEM_BYTES, len).toString('utf8');
  }

  /** Records a verdict; returns the state before it. */
  set(slot: number, state: SequencerHealth, problem: string): SequencerHealth {
    const base = slot * WORDS;
    const bytes = Buffer.from(problem.slice(0, PROBLEM_BYTES), 'utf8').subarray(0, PROBLEM_BYTES);
    // Text first, then its length, then the state: a reader may see an older problem with the
    // new state for an instant, never a torn length.
    this.text.set(bytes, slot * PROBLEM_BYTES);
    Atomics.store(this.words, base + 2, bytes.length);
    const before = Atomics.exchange(this.words, base, STATES.indexOf(state));
    Atomics.add(this.words, base + 1, 1);
    return STATES[before]!;
  }
}
