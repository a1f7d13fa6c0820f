/**
 * Whether a bench's fixed loopback ports are free before it starts its servers: uWS binds with
 * SO_REUSEPORT, so a port another process holds is not refused but shared, and the kernel hands
 * some of the bench's connections to that process (a run beside another on the same ports then
 * counted a stranger's answers as its own).
 */
import { connect } from 'node:net';

/** The ports of `ports` on 127.0.0.1 that something accepts connections on. */
export async function portsTaken(ports: readonly number[]): Promise<number[]> {
  const open = await Promise.all(
    ports.map(
      (port) =>
        new Promise<boolean>((resolve) => {
          const s = connect({ host: '127.0.0.1', port });
          s.once('connect', () => {
            s.destroy();
            resolve(true);
          });
          s.once('error', () => resolve(false));
        }),
    ),
  );
  return ports.filter((_, i) => open[i]);
}
