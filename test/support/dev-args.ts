/**
 * The command line of `npm start`'s development gate (scripts/dev.js, as built) on the ports a test
 * took, in its own folder: what every test that starts it runs (`spawn(process.execPath, devArgs(…))`).
 */
import { join } from 'node:path';

export interface DevPorts {
  readonly port: number;
  readonly anvil: number;
  readonly internal: number;
}

export function devArgs(dir: string, ports: DevPorts, ...flags: readonly string[]): string[] {
  return [
    join(import.meta.dirname, '../../scripts/dev.js'),
    '--dir',
    dir,
    '--port',
    String(ports.port),
    '--anvil-port',
    String(ports.anvil),
    '--internal-port',
    String(ports.internal),
    ...flags,
  ];
}
