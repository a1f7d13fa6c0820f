/**
 * `npm start`'s check before it starts anything: a port already taken (bound by anything,
 * answering or not) is one line naming the option that changes it.
 */
import { createServer } from 'node:net';

/** Whether `host:port` can be bound right now (nothing else listens there). */
export function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}
