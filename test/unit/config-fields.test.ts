/**
 * The configuration fields are declared once (src/config/config-schema.ts, CONFIG): the table in
 * docs/operations.md is the one rendered from the declarations, row for row, and the declarations
 * are what validation reads: every declared field is checked under its own name, has the default
 * the table shows, and no field is read that is not declared.
 */
import assert from 'node:assert/strict';
import { AccountsFileError, parseAccounts } from '../../src/accounts/parse.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { fieldRows, renderFieldTable } from '../../src/base/config-fields.js';
import { ConfigError, parseConfig } from '../../src/config/config.js';
import { CONFIG } from '../../src/config/config-schema.js';
import { block } from '../../scripts/readme-tables.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const OPERATIONS = readFileSync(join(import.meta.dirname, '../../../docs/operations.md'), 'utf8');
// A TLS host entry: its fields are read only where a list has an element.
const minimal = {
  chains: [{ chainId: DEV_CHAIN_ID, hosts: ['a.example'], sequencers: ['http://127.0.0.1:8547'] }],
  listen: { tls: { hosts: [{ names: ['a.example'] }] } },
};
const declared = fieldRows(CONFIG).map((f) => f.path);

/** Every leaf of a parsed configuration as `a.b` (array elements as `a[].b`). */
function leaves(v: unknown, prefix = ''): string[] {
  if (Array.isArray(v) && v.length > 0 && typeof v[0] === 'object') return leaves(v[0], `${prefix}[]`);
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return Object.entries(v).flatMap(([k, x]) => leaves(x, prefix === '' ? k : `${prefix}.${k}`));
  return [prefix];
}

/** `input` with `value` at a declared path (`chains[]` is the first chain). */
function withValue(path: string, value: unknown): Record<string, unknown> {
  const out = structuredClone(minimal) as Record<string, unknown>;
  let at: Record<string, unknown> = out;
  const keys = path.replace('[]', '.0').split('.');
  keys.slice(0, -1).forEach((k) => {
    const next = (at[k] ?? {}) as Record<string, unknown>;
    at[k] = next;
    at = next;
  });
  at[keys.at(-1)!] = value;
  return out;
}

function problems(input: unknown): readonly string[] {
  try {
    parseConfig(input, '/etc/txgate', {});
    return [];
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.problems;
  }
}

describe('configuration fields, declared once', () => {
  it('the table in docs/operations.md is the one rendered from the declarations (node dist/scripts/docs-tables.js)', () => {
    assert.equal(block(OPERATIONS, 'config'), renderFieldTable(CONFIG), 'docs/operations.md is out of date: run node dist/scripts/docs-tables.js');
  });

  it('the table has a row for every declared field and none other, in declaration order', () => {
    const rows = [...block(OPERATIONS, 'config').matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
    assert.deepEqual(rows, declared);
    assert.equal(new Set(rows).size, rows.length, 'a field is listed once');
  });

  it('what validation produces is exactly the declared fields', () => {
    assert.deepEqual(leaves(parseConfig(minimal, '/etc/txgate', {})).sort(), [...declared].sort());
  });

  it('every declared field is validated under its own name', () => {
    for (const path of declared) {
      const named = path.replace('[]', '[0]');
      assert.ok(
        problems(withValue(path, { not: 'a value' })).some((p) => p.startsWith(named)),
        `${path}: a bad value is reported under its name\n${problems(withValue(path, { not: 'a value' })).join('\n')}`,
      );
    }
  });

  it('every default the table shows is the default validation gives', () => {
    const parsed = parseConfig({ chains: [{ chainId: 1, hosts: ['a.example'], sequencers: ['http://127.0.0.1:8547'] }] }, '/etc/txgate', {});
    let checked = 0;
    for (const f of fieldRows(CONFIG)) {
      const shown = /^`(.*)`$/.exec(f.shown)?.[1];
      if (shown === undefined) continue;
      let v: unknown = parsed;
      for (const k of f.path.replace('[]', '.0').split('.')) v = (v as Record<string, unknown>)[k];
      const want = f.path === 'accounts.file' ? join('/etc/txgate', shown) : shown;
      assert.equal(String(v), want, f.path);
      checked++;
    }
    assert.ok(checked > 40, `defaults checked: ${checked}`);
  });

  it('a field that is not declared is refused, naming it', () => {
    assert.ok(problems({ ...minimal, listen: { hots: 'x' } }).includes('listen.hots: unknown field (did you mean host?)'));
    assert.ok(problems(withValue('chains[].sync.wait', 1)).includes('chains[0].sync.wait: unknown field'));
  });

  it('an unknown field offers the nearest known one; a wrong value says what it got (type and value)', () => {
    const p = problems({ ...minimal, limits: { maxBodyByte: 1 }, listen: { port: '28090', Host: '::' }, log: { level: 'wran' } });
    for (const want of [
      'limits.maxBodyByte: unknown field (did you mean maxBodyBytes?)',
      'listen.Host: unknown field (did you mean host?)',
      'listen.port: must be an integer from 0 to 65535, got the string "28090"',
    ])
      assert.ok(p.includes(want), `missing: ${want}\n${p.join('\n')}`);
    assert.ok(
      p.some((x) => x.startsWith('log.level: must be one of') && x.endsWith('got the string "wran" (did you mean warn?)')),
      p.join('\n'),
    );
    const far = problems({ ...minimal, limits: { zzzzzzzz: 1 }, workers: 1.5, websocket: { enabled: 'yes' } });
    assert.ok(far.includes('limits.zzzzzzzz: unknown field'), far.join('\n'));
    assert.ok(
      far.some((x) => x.startsWith('workers: must be') && x.endsWith('got 1.5')),
      far.join('\n'),
    );
    assert.ok(far.includes('websocket.enabled: must be true or false, got the string "yes"'), far.join('\n'));
    const hosts = problems({ ...minimal, chains: [{ ...minimal.chains[0], hosts: ['a.example:80'] }] });
    assert.ok(hosts.includes('chains[0].hosts[0]: must be a bare hostname (no scheme, port or path), got the string "a.example:80"'), hosts.join('\n'));
    // A long string is told by its length: a secret put in the wrong field is never echoed.
    const secret = 'txg_' + 'a'.repeat(60);
    const long = problems({ ...minimal, listen: { port: secret } });
    assert.ok(long.includes('listen.port: must be an integer from 0 to 65535, got a string of 64 characters'), long.join('\n'));
    assert.ok(!long.join('\n').includes(secret));
  });

  it('an accounts document says what it got too', () => {
    const grant = { chainId: '10', rateLimit: { perSecond: 'fast', burst: 1 }, tipAddresses: [], minTipWei: 5, sync: 'yes', conditonal: true };
    const e = (() => {
      try {
        parseAccounts({ accounts: [{ id: 'a', keySha256: ['ab'.repeat(32)], grants: [grant] }] });
      } catch (x) {
        return x as AccountsFileError;
      }
      return null;
    })();
    assert.ok(e instanceof AccountsFileError);
    const text = e.problems.join('\n');
    for (const want of [
      'grants[0].chainId: must be a positive integer, got the string "10"',
      'grants[0].rateLimit.perSecond: must be a number > 0 and ≤ 1000000, got the string "fast"',
      'grants[0].minTipWei: must be a decimal string of wei, got 5',
      'grants[0].sync: must be true or false (or absent), got the string "yes"',
      'grants[0].conditonal: unknown field (did you mean conditional?)',
    ])
      assert.ok(text.includes(want), `missing: ${want}\n${text}`);
  });

  it('any JSON value, as the whole file or at any declared field, gives a configuration or a ConfigError, never another error', () => {
    const check = (input: unknown) => {
      try {
        parseConfig(input, '/etc/txgate', {});
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        assert.ok(e.problems.length > 0);
      }
    };
    fc.assert(fc.property(fc.jsonValue(), check), { numRuns: 300 });
    fc.assert(
      fc.property(fc.constantFrom(...declared), fc.jsonValue(), (path, value) => check(withValue(path, value))),
      { numRuns: 1000 },
    );
  });
});
