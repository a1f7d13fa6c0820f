/**
 * Configuration (docs/design.md §2.1): loaded and validated once at start-up. Every problem is reported
 * at once, each naming its field; the result is deep-frozen and each part of the service is
 * handed only its slice. Every field has a default except `chains`. Each field is declared
 * once, in CONFIG (config-schema.ts): validation here, the Config type and the table in
 * docs/operations.md all come from the declarations.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { checkAccounts } from '../accounts/config.js';
import { readSection, type Values } from '../base/config-fields.js';
import { isObj, Reader } from '../base/config-reader.js';
import { CONFIG, hostnameOf } from './config-schema.js';
import { checkTls } from '../tls/config.js';

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export type Config = Values<typeof CONFIG>;
export type ChainConfig = Config['chains'][number];
export type SyncConfig = ChainConfig['sync'];
export type TrackConfig = ChainConfig['track'];
export type WebSocketConfig = Config['websocket'];

/**
 * Validates a parsed configuration object. `baseDir` resolves relative file paths (the
 * directory of the config file). Throws ConfigError listing every problem.
 */
export function parseConfig(input: unknown, baseDir: string, env: NodeJS.ProcessEnv = process.env): Config {
  const r = new Reader();
  if (!isObj(input)) r.problems.push('config: must be a JSON object');
  const cfg = readSection(r, CONFIG, input, 'config', '', { baseDir, env });
  checkAccounts(r, cfg.accounts);
  checkTls(r, cfg.listen.tls);
  // The ordered mode's counter is one lane object's; each worker thread has its own (docs/express-lane.md).
  cfg.chains.forEach((c, i) => {
    if (c.expressLane.enabled && c.expressLane.sequence === 'ordered' && cfg.workers > 1)
      r.problems.push(`chains[${i}].expressLane.sequence: "ordered" needs workers: 1 (each worker thread has a lane of its own; use "dont-care")`);
  });
  if (isObj(input) && Array.isArray(input.chains)) checkChains(r, input.chains);
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  const limits = { ...cfg.limits, chainIdMaxBodyBytes: Math.min(cfg.limits.chainIdMaxBodyBytes, cfg.limits.maxBodyBytes) };
  return deepFreeze({ ...cfg, limits });
}

/** The rules between chains: a chain id configured once, a hostname bound to one chain only. */
function checkChains(r: Reader, chains: readonly unknown[]): void {
  const hostOwner = new Map<string, number>();
  const chainIds = new Set<unknown>();
  chains.forEach((c, i) => {
    if (!isObj(c)) return;
    const f = `chains[${i}]`;
    if (Number.isInteger(c.chainId) && (c.chainId as number) >= 1) {
      if (chainIds.has(c.chainId)) r.problems.push(`${f}.chainId: ${c.chainId} is configured twice`);
      chainIds.add(c.chainId);
    }
    if (!Array.isArray(c.hosts)) return;
    c.hosts.forEach((h: unknown, j: number) => {
      const host = hostnameOf(h);
      if (host === undefined) return;
      const owner = hostOwner.get(host);
      if (owner !== undefined) r.problems.push(`${f}.hosts[${j}]: "${host}" is already bound to chains[${owner}]`);
      hostOwner.set(host, i);
    });
  });
}

/** Reads and validates a config file; JSON errors are reported like field errors. */
export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError([`${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError([`${path}: not valid JSON (${(e as Error).message})`]);
  }
  return parseConfig(json, dirname(resolve(path)), env);
}

export function deepFreeze<T>(o: T): T {
  if (typeof o === 'object' && o !== null && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}
