/** What the benches read of the machine: the CPU's model (for the results) and a process's CPU time. */
import { readFileSync } from 'node:fs';

export function cpuModel(): string {
  try {
    return /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** utime + stime of a process and its threads, in µs (clock ticks are 10 ms). */
export function cpuMicros(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}
