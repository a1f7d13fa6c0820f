/**
 * A port free on `host` now. Where every listener of the port must bind it by number (worker
 * threads sharing it, a TLS rotation listening again beside the old app), `port: 0` is
 * resolved first: a socket bound to port 0 cannot share the port it got (Linux). Tests and benches
 * take their ports from it too.
 */
import { createServer } from 'node:net';

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, host, () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
