/**
 * txgate's `data.reason` found in an error a client library threw, by shape, never by
 * `instanceof`: a client project may hold its own copy of viem or ethers beside the one this
 * package resolves, and their classes differ though the errors are the same. Walks `cause`
 * (viem, standard), `error` and `info.error` (ethers), and reads `data.reason` at each step.
 */
const MAX_DEPTH = 12;

export function txgateReason(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < MAX_DEPTH * 3) {
    const e = queue.shift();
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const o = e as { data?: unknown; cause?: unknown; error?: unknown; info?: unknown };
    const data = o.data as { reason?: unknown } | undefined;
    if (typeof data === 'object' && data !== null && typeof data.reason === 'string') return data.reason;
    queue.push(o.cause, o.error, (o.info as { error?: unknown } | undefined)?.error);
  }
  return undefined;
}
