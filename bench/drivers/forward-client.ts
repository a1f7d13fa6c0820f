/**
 * The forward's client alone, for bench/entry/forward-cost.ts: calls eth_sendRawTransaction on the
 * stub sequencer through txgate's Upstream for a URL (src/upstreams/registry.ts: the
 * HttpUpstream or the WsUpstream), `concurrency` at a time, in rounds the driver starts.
 *
 * Usage: node forward-client.js URL CONCURRENCY N WARMUP. Warms up with WARMUP calls, prints
 * `warm`, then for each line `go` on stdin makes N calls and prints `done`; `end` exits.
 */
import { createInterface } from 'node:readline';
import { openUpstream } from '../../src/upstreams/registry.js';

const [url, concurrency, n, warmup] = [process.argv[2]!, Number(process.argv[3] ?? 8), Number(process.argv[4] ?? 2000), Number(process.argv[5] ?? 20000)];
const raw =
  '0x02f86f82123780843b9aca0084b2d05e0082520894a0ee7a142d267c1f36714e4a8f75612f20a7972085e8d4a5100080c001a0' + 'ab'.repeat(32) + 'a0' + 'cd'.repeat(32);
const params = `["${raw}"]`;
const seq = openUpstream(url, { calls: 64, sockets: 2 });
const times = { timeoutMs: 5000, queueMs: 5000 };

async function calls(count: number): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < count) {
        started++;
        const a = await seq.call('eth_sendRawTransaction', params, times);
        if (a.kind !== 'result') throw new Error(`unexpected answer ${JSON.stringify(a)}`);
      }
    }),
  );
}

// A ws:// upstream connects in the background: the first calls wait for it.
await calls(warmup);
process.stdout.write('warm\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'go') {
    await calls(n);
    process.stdout.write('done\n');
  } else if (line === 'end') break;
}
await seq.close(true);
process.exit(0);
