/**
 * One txgate per address. The public listener's threads bind the port with SO_REUSEPORT (so the
 * kernel spreads connections over them), which would also let a second txgate (or any program
 * that sets SO_REUSEPORT) bind the same address and silently take half the connections. Before
 * any thread listens, the main thread therefore:
 *
 * 1. claims the address among txgates: it listens on an abstract Unix socket named after the
 *    address, which only one process can hold and which the kernel releases when the process
 *    ends (no stale lock file after a crash; two txgates started at once cannot both win);
 * 2. probes the address with a plain bind (no SO_REUSEPORT): it fails while anything listens
 *    there, whether it set SO_REUSEPORT or not, and is closed again at once.
 *
 * Port 0 (an ephemeral port) is never shared and is not claimed.
 */
import { createServer, type Server } from 'node:net';

/** The address is served already: by another txgate (`txgate`) or by something else (`other`). */
export class AddressTaken extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    readonly by: 'txgate' | 'other',
    readonly code: string,
  ) {
    super(`cannot listen on ${host}:${port}: ${AddressTaken.why(by, code)}`);
    this.name = 'AddressTaken';
  }

  static why(by: 'txgate' | 'other', code: string): string {
    if (by === 'txgate') return 'the port is in use: another txgate serves this address';
    if (code === 'EADDRINUSE') return 'the port is in use';
    if (code === 'EADDRNOTAVAIL') return "the address is not this host's";
    return `cannot bind (${code})`;
  }
}

export interface AddressClaim {
  /** Lets another txgate claim the address (the process ending does the same). */
  release(): void;
}

function listen(server: Server, target: { path: string } | { host: string; port: number; exclusive: true }): Promise<string | null> {
  return new Promise((resolve) => {
    server.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? String(e)));
    server.listen(target, () => resolve(null));
  });
}

/** The lock's name: one per host and port, in the abstract namespace (Linux; nothing on disk). */
export function claimName(host: string, port: number): string {
  return `\0txgate-listen:${host}:${port}`;
}

/** Claims `host:port` for this process; rejects with AddressTaken when it is served already. */
export async function claimAddress(host: string, port: number): Promise<AddressClaim> {
  if (port === 0) return { release() {} };
  const lock = createServer((c) => c.destroy());
  const taken = await listen(lock, { path: claimName(host, port) });
  if (taken === 'EADDRINUSE') throw new AddressTaken(host, port, 'txgate', taken);
  // Anything else (a platform without abstract sockets) leaves only the probe to decide.
  if (taken === null) lock.unref();
  const probe = createServer();
  const failed = await listen(probe, { host, port, exclusive: true });
  if (failed !== null) {
    if (taken === null) lock.close();
    throw new AddressTaken(host, port, 'other', failed);
  }
  await new Promise<void>((r) => probe.close(() => r()));
  return {
    release() {
      if (taken === null) lock.close();
    },
  };
}
