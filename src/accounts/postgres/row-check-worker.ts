/**
 * The row checker's thread (row-checker.ts): reads a large row itself, by primary key, on a
 * connection of its own, and checks it with checkRow: the document's transfer and decoding,
 * its JSON parse and the EIP-55 checksums of a large grant all stay off the thread that serves,
 * which receives only the verdict.
 */
import { parentPort, workerData } from 'node:worker_threads';
import postgres from 'postgres';
import { initChecksum } from '../checksum.js';
import { checkRow } from './row-check.js';

const { url, options } = workerData as { url: string; options: Record<string, unknown> };
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
