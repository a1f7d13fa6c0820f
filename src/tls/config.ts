/**
 * The `listen.tls` section: HTTPS and WSS on the public port, terminated in the serving thread
 * (docs/operations.md#tls). Off by default: plain HTTP stays the default for local use and
 * behind a balancer. A default certificate, and certificates by host name chosen by SNI. Paths
 * are relative to the config file; a key's passphrase comes from an environment variable named
 * here (its value is never in the configuration, a log line or a metric).
 */
import { resolve } from 'node:path';
import { bool, custom, type ReadContext, readSection, type Section, type Values } from '../base/config-fields.js';
import type { Reader } from '../base/config-reader.js';

/** A server name as SNI carries it: a hostname, or `*.` and a hostname (one label of any name). */
const SERVER_NAME = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An optional file path, resolved against the config file's directory. */
const file = (doc: string) =>
  custom<string | null>('a path', 'none', doc, (r, v, path, ctx) => (v === undefined ? null : resolve(ctx.baseDir, r.str(v, path, ''))));

/** The name of an environment variable holding a key's passphrase; it must be set. */
const passphraseEnv = (doc: string) =>
  custom<string | null>('an environment variable name', 'none', doc, (r, v, path, ctx) => {
    if (v === undefined) return null;
    const name = r.str(v, path, '');
    if (!ENV_NAME.test(name)) r.problems.push(`${path}: must be an environment variable name`);
    else if (ctx.env[name] === undefined) r.problems.push(`${path}: the environment variable ${name} is not set`);
    return name;
  });

/** One certificate served to the SNI names it lists. */
const HOST = {
  names: custom<readonly string[]>(
    'a non-empty array of server names',
    'required',
    'the server names (SNI) this certificate answers; `*.example.com` matches one label',
    (r, v, path) => {
      if (!Array.isArray(v) || v.length === 0) {
        r.problems.push(`${path}: must be a non-empty array of server names`);
        return [];
      }
      const out: string[] = [];
      v.forEach((n: unknown, i) => {
        const s = typeof n === 'string' ? n.toLowerCase() : '';
        if (!SERVER_NAME.test(s)) r.problems.push(`${path}[${i}]: must be a server name (a hostname, or *. and a hostname)`);
        else out.push(s);
      });
      return out;
    },
  ),
  certFile: file('its certificate chain (PEM, leaf first)'),
  keyFile: file('its private key (PEM)'),
  passphraseEnv: passphraseEnv("the environment variable holding its key's passphrase"),
} satisfies Section;

/** The `listen.tls` fields (src/config/config.ts places them under `listen`). */
export const TLS = {
  enabled: bool(false, 'HTTPS and WSS on the public port (see [TLS](#tls)); the internal listener stays plain'),
  certFile: file('the default certificate chain (PEM, leaf first): served to any server name `hosts` does not list; required with `enabled`'),
  keyFile: file("the default certificate's private key (PEM); required with `enabled`"),
  passphraseEnv: passphraseEnv("the environment variable holding the default key's passphrase, if it is encrypted"),
  hosts: {
    allowed: 'an array',
    shown: '`[]`',
    doc: 'certificates by server name (SNI), each with the fields below',
    items: HOST,
    read(r: Reader, v: unknown, path: string, ctx: ReadContext): readonly Values<typeof HOST>[] {
      if (v === undefined) return [];
      if (!Array.isArray(v)) {
        r.problems.push(`${path}: must be an array`);
        return [];
      }
      return v.map((e: unknown, i) => readSection(r, HOST, e, `${path}[${i}]`, `${path}[${i}].`, ctx));
    },
  },
} satisfies Section;

export type TlsConfig = Values<typeof TLS>;
export type TlsHostConfig = Values<typeof HOST>;

/** The rules between the fields: files required where used, a server name listed once. */
export function checkTls(r: Reader, t: TlsConfig): void {
  if (!t.enabled) return;
  if (t.certFile === null) r.problems.push('listen.tls.certFile: required by listen.tls.enabled');
  if (t.keyFile === null) r.problems.push('listen.tls.keyFile: required by listen.tls.enabled');
  const seen = new Set<string>();
  t.hosts.forEach((h, i) => {
    if (h.certFile === null) r.problems.push(`listen.tls.hosts[${i}].certFile: required`);
    if (h.keyFile === null) r.problems.push(`listen.tls.hosts[${i}].keyFile: required`);
    for (const n of h.names) {
      if (seen.has(n)) r.problems.push(`listen.tls.hosts[${i}].names: ${n} is listed twice`);
      seen.add(n);
    }
  });
}
