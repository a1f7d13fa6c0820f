// The container's health check: GET /ready on the public listener of the configuration
// ($TXGATE_CONFIG, default /etc/txgate/txgate.json), read with txgate's own defaults.
// Exit 0 when ready (200), 1 otherwise (503 names what is not ready; printed).
import { loadConfigFile } from '../dist/src/config/config.js';

const file = process.env.TXGATE_CONFIG ?? '/etc/txgate/txgate.json';
const { host, port } = loadConfigFile(file).listen;
const target = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
try {
  const r = await fetch(`http://${target.includes(':') ? `[${target}]` : target}:${port}/ready`, { signal: AbortSignal.timeout(2000) });
  const body = await r.text();
  if (r.status !== 200) process.stdout.write(`${r.status} ${body}\n`);
  process.exit(r.status === 200 ? 0 : 1);
} catch (e) {
  process.stdout.write(`GET /ready failed: ${e.message}\n`);
  process.exit(1);
}
