/**
 * The row checker's thread (row-checker.ts): reads a large row itself, by primary key, on a
 * connection of its own, and checks it with checkRow: the document's transfer and decoding,
 * its JSON parse and the EIP-55 checksums of a large grant all stay off the thread that serves,
 * which receives only the verdict: the account with its address lists as shared bytes
 * (address-list.ts), adopted by every thread without a copy.
 *
 * The thread runs at the lowest CPU priority (nice 19; on Linux a thread's own): on a busy host
 * a check must not take a CPU from a thread that serves. bench:fleet-stall showed the serving
 * thread's stalls during a large grant's check spent mostly runnable and waiting for a CPU,
 * not working (schedstat).
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import postgres from 'postgres';
import { initChecksum } from '../checksum.js';
import { checkRow } from './row-check.js';

const { url, options } = workerData as { url: string; options: Record<string, unknown> };
try {
  setPriority(19); // this thread only (Linux); where refused, it runs at the process's priority
} catch {
  // not permitted here: no harm
}
await initChecksum();
// The store's CLIENT_OPTIONS (functions do not cross threads): no type fetch, notices ignored.
const sql = postgres(url, { fetch_types: false, onnotice: () => {}, ...options, max: 1 });
const port = parentPort!;
port.on('message', (m: { n: number; id: string }) => {
  sql<
    { id: string; version: string; doc_bytes: number; text: string }[]
  >`SELECT id, version, doc_bytes, doc::text AS text FROM txgate_accounts WHERE id = ${m.id}`.then(
    ([r]) =>
      port.postMessage({
        n: m.n,
        verdict: r === undefined ? null : checkRow({ id: r.id, version: Number(r.version), bytes: Number(r.doc_bytes), text: r.text }),
      }),
    (e: unknown) => port.postMessage({ n: m.n, error: String((e as Error)?.message ?? e) }),
  );
});
port.postMessage({ n: 0 }); // ready
