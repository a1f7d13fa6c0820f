/**
 * Self instructions by function in one callgrind dump, with JIT-compiled JavaScript named from
 * node's perf map (`--perf-basic-prof` writes /tmp/perf-PID.map: `START SIZE name` lines, hex;
 * callgrind itself sees only addresses there). Shared by bench:instr's `--top` and
 * bench/entry/forward-cost.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

export interface TopFunction {
  readonly fn: string;
  /** Self instructions per request (or call): the dump's count divided by `per`. */
  readonly perCall: number;
}

/** The `n` functions with the most self instructions in `dump`, per one of `per` requests. */
export function topFunctions(dump: string, perfMap: string, n: number, per: number): TopFunction[] {
  const out = spawnSync('callgrind_annotate', ['--inclusive=no', '--threshold=99', dump], { encoding: 'utf8', maxBuffer: 256 << 20 }).stdout ?? '';
  const ranges: { start: number; end: number; name: string }[] = [];
  if (existsSync(perfMap))
    for (const line of readFileSync(perfMap, 'utf8').split('\n')) {
      const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
      if (m !== null) ranges.push({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]! });
    }
  ranges.sort((a, b) => a.start - b.start);
  const nameOf = (addr: number) => {
    let lo = 0;
    let hi = ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = ranges[mid]!;
      if (addr < r.start) hi = mid - 1;
      else if (addr >= r.end) lo = mid + 1;
      else return r.name;
    }
    return null;
  };
  const byName = new Map<string, number>();
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$/.exec(line);
    if (m === null || m[2]!.startsWith('PROGRAM TOTALS')) continue;
    const ir = Number(m[1]!.replace(/,/g, ''));
    let fn = m[2]!.replace(/^\?\?\?:/, '').replace(/\s*\[[^\]]*\]$/, '');
    const addr = /^0x([0-9a-f]+)$/.exec(fn);
    if (addr !== null) fn = nameOf(parseInt(addr[1]!, 16)) ?? `JIT code at 0x${addr[1]} (unnamed)`;
    fn = fn.replace(/\(.*\)\s*(const)?$/, '').slice(0, 110);
    byName.set(fn, (byName.get(fn) ?? 0) + ir);
  }
  return [...byName]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([fn, ir]) => ({ fn, perCall: Math.round(ir / per) }));
}
