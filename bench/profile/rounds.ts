/**
 * The profiler's measuring (docs/performance.md, "The profiler"): builds under callgrind with
 * their stage probes, warmed with the scenarios interleaved, then counted round by round with
 * the builds and scenarios side by side (round r of a scenario on each build in turn, the order
 * turned round every other round), each round read from its dump and attributed
 * (attribute.ts). A round in which the collector ran or TurboFan compiled more than a small
 * share is counted again: either lands inside whichever stage was running, so the parts of such
 * a round are not the stages' own.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Callgrind, gcOf, type Server } from '../instr/callgrind.js';
import { answered, type Driver } from '../instr/drive.js';
import type { Scenario } from '../instr/scenarios.js';
import { attribute, groupsFor, type Attributed } from './attribute.js';
import { readDump } from './dump.js';

/** A build counted: its server, where it wrote its slots' names (null: a reference without probes, the echo), and the driver that loads it. */
export interface Counted {
  readonly build: string;
  readonly server: Server;
  readonly mapFile: string | null;
  readonly driver: Driver;
}

export interface Round extends Attributed {
  /** Still compiling or collecting after its retries: its parts hold that work where it fell (compare leaves the pair out where it can). */
  readonly dirty: boolean;
  /** Collections in the round (--trace-gc-nvp): its parts hold them where they fell. */
  readonly collections: number;
  /** Answers of another status than the scenario's, by status (a cold or starved server). */
  readonly unexpected?: string;
}

export interface RoundSettings {
  readonly requests: number;
  /** Times a round with a collection or compiling in it is counted again. */
  readonly retries: number;
  /** A round whose compiling is more than this share of its count is counted again. */
  readonly maxJit: number;
}

export class Rounds {
  constructor(
    private readonly cg: Callgrind,
    private readonly dir: string,
    private readonly slots: number,
    private readonly o: RoundSettings,
    /** With --keep: where every dump is copied. */
    private readonly keep?: string,
  ) {
    if (keep !== undefined) mkdirSync(keep, { recursive: true });
  }
  private kept = 0;

  /** Unmeasured rounds (instrumentation still off): every scenario on every build, interleaved. */
  async warm(builds: readonly Counted[], scenarios: readonly Scenario[], rounds: number, said: (r: number) => void): Promise<void> {
    for (let r = 0; r < rounds; r++) {
      for (const s of scenarios) for (const b of builds) await b.driver.drive(b.server.port, s, this.o.requests);
      said(r + 1);
    }
  }

  /** One counted round of `s` on `b`, counted again while a collection or compiling fell in it. */
  async steady(b: Counted, s: Scenario): Promise<Round> {
    let r = await this.one(b, s);
    for (let k = 0; k < this.o.retries && (this.dirty(r) || r.unexpected !== undefined); k++) r = await this.one(b, s);
    if (r.unexpected !== undefined) throw new Error(`${b.build} / ${s.name}: expected every answer ${s.status}, got ${r.unexpected}`);
    return { ...r, dirty: this.dirty(r) };
  }

  private dirty(r: Omit<Round, 'dirty'>): boolean {
    return r.collections > 0 || r.jit > this.o.maxJit * r.total;
  }

  private async one(b: Counted, s: Scenario): Promise<Omit<Round, 'dirty'>> {
    const { server } = b;
    const pid = server.child.pid!;
    await b.driver.prepare(server.port);
    this.cg.control('-z', pid);
    const gcFrom = server.gc.length;
    const statuses = await b.driver.drive(server.port, s, this.o.requests);
    this.cg.control('-d', pid);
    await new Promise((r) => setTimeout(r, 50)); // the round's last GC line
    const n = answered(statuses);
    const unexpected = [...statuses].some(([code]) => code !== s.status) ? JSON.stringify(Object.fromEntries(statuses)) : undefined;
    const slots = b.mapFile === null ? {} : (JSON.parse(readFileSync(b.mapFile, 'utf8')) as Record<string, string>);
    const names = new Map(Object.entries(slots).map(([k, v]) => [Number(k), v]));
    const a = this.readNewest(server, (file) => attribute(readDump(file, groupsFor(this.slots)), n, names, this.slots));
    const g = gcOf(server.gc.slice(gcFrom));
    return { ...a, collections: g.scavenges + g.majors, ...(unexpected !== undefined ? { unexpected } : {}) };
  }

  /** The server's newest dump, read; it and every older one removed. */
  private readNewest(server: Server, read: (file: string) => Attributed): Attributed {
    const prefix = `cg.${server.name}.${server.child.pid}.`;
    const files = readdirSync(this.dir)
      .filter((f) => f.startsWith(prefix))
      .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
    if (files.length === 0) throw new Error(`${server.name}: callgrind wrote no dump`);
    if (this.keep !== undefined) copyFileSync(join(this.dir, files.at(-1)!), join(this.keep, `${files.at(-1)}.${++this.kept}`));
    try {
      return read(join(this.dir, files.at(-1)!));
    } finally {
      for (const f of files) rmSync(join(this.dir, f));
    }
  }
}
