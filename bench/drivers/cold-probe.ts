/**
 * The host's own cost of a silence, without txgate: a fixed piece of JavaScript work (a walk of
 * 1 MiB of numbers, 2,000 small objects read, a JSON.parse of 50 of them) timed back to back and
 * after sleeps of 1 ms to 4 s, in this process (pin it: `taskset -c 0`). Every sleep's median
 * against the back-to-back one is what a request loses to the silence before it on this host
 * whatever the server (its caches and predictors refilled by whatever ran meanwhile);
 * docs/performance.md ("A silence that costs nothing") compares txgate's first submission with it.
 *
 *   taskset -c 0 node dist/bench/drivers/cold-probe.js   →   one line per sleep, µs
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises';

const data = new Float64Array(1 << 17);
for (let i = 0; i < data.length; i++) data[i] = i;
const objs = Array.from({ length: 2000 }, (_, i) => ({ a: i, b: String(i), c: [i, i + 1] }));
const text = JSON.stringify(objs.slice(0, 50));

function work(): number {
  let s = 0;
  for (let i = 0; i < data.length; i += 8) s += data[i]!;
  for (const o of objs) s += o.a + o.c[1]! + o.b.length;
  return s + (JSON.parse(text) as unknown[]).length;
}

let sink = 0;
for (let i = 0; i < 2000; i++) sink += work();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
let base = 0;
for (const ms of [0, 1, 10, 100, 1000, 4000]) {
  const times: number[] = [];
  for (let r = 0; r < (ms >= 1000 ? 5 : 15); r++) {
    if (ms === 0) await immediate();
    else await sleep(ms);
    const t0 = performance.now();
    sink += work();
    times.push(Math.round((performance.now() - t0) * 1000));
  }
  const m = median(times);
  if (ms === 0) base = m;
  process.stdout.write(`${ms === 0 ? 'back to back' : `after ${ms} ms asleep`}: ${m} µs (${(m / base).toFixed(2)}×)  [${times.join(', ')}]\n`);
}
if (sink === 0) process.stdout.write('\n');
