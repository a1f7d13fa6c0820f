/**
 * `npm start`'s banner (src/dev/banner.ts) for every set of its flags (--sync, --track,
 * --websocket, --tls): the commands to try are those of each flag alone, for the same TLS (so a
 * pair of flags prints nothing a flag alone does not, and test/chain/docs-commands.test.ts runs
 * every command by starting with all of them, once in plain HTTP and once over TLS); over TLS
 * every `npm run demo` line carries the development CA (the wss:// one did not).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BannerFacts, banner, bannerCommands } from '../../src/dev/banner.js';

const BASE: BannerFacts = {
  port: 18080,
  internalPort: 19464,
  anvilUrl: 'http://127.0.0.1:18545',
  sync: false,
  track: false,
  websocket: false,
  tls: null,
  configFile: '/d/txgate.json',
  configWritten: true,
  accountsFile: '/d/accounts.json',
  accountsCreated: true,
};
const TLS = { certFile: '/d/tls/server.pem', caFile: '/d/tls/ca.pem' };
const FLAGS = ['sync', 'track', 'websocket', 'conditional'] as const;
/** A flag's facts: true, or for --conditional its development sequencer. */
const on = (f: (typeof FLAGS)[number]) => (f === 'conditional' ? { sequencerUrl: 'http://127.0.0.1:18550', grantAmended: false } : true);
const subsets = <T>(xs: readonly T[]): T[][] => {
  const all: T[][] = [[]];
  for (const x of xs) for (const s of all.slice()) all.push([...s, x]);
  return all;
};

describe("npm start's banner: the commands it prints", () => {
  for (const tls of [null, TLS]) {
    const facts = (flags: readonly (typeof FLAGS)[number][]): BannerFacts => ({ ...BASE, tls, ...Object.fromEntries(flags.map((f) => [f, on(f)])) });
    it(`${tls === null ? 'plain HTTP' : 'TLS'}: every set of flags prints the union of each flag's commands`, () => {
      const alone = new Map(FLAGS.map((f) => [f, new Set(bannerCommands(facts([f])))]));
      for (const set of subsets(FLAGS)) {
        const expected = new Set([...bannerCommands(facts([])), ...set.flatMap((f) => [...alone.get(f)!])]);
        assert.deepEqual(new Set(bannerCommands(facts(set))), expected, set.join(' ') || 'no flag');
      }
    });
  }
  it('each flag adds its own command; every demo line over TLS trusts the development CA, the wss:// one included', () => {
    const all = bannerCommands({
      ...BASE,
      sync: true,
      track: true,
      websocket: true,
      tls: TLS,
      conditional: { sequencerUrl: 'http://127.0.0.1:18550', grantAmended: false },
    });
    assert.ok(all.some((c) => c.includes('--sync')) && all.some((c) => c.includes('--track')) && all.some((c) => c.includes('wss://localhost:18080')));
    assert.ok(all.some((c) => c.includes('npm run demo -- --conditional --url')) && all.some((c) => c.includes('--conditional --unmet')));
    assert.ok(all.some((c) => c === `curl --cacert ${TLS.caFile} https://localhost:18080/health`));
    const demos = all.filter((c) => c.includes('npm run demo'));
    assert.equal(demos.length, 6);
    for (const c of demos) assert.ok(c.startsWith(`NODE_EXTRA_CA_CERTS=${TLS.caFile} npm run demo -- `), c);
    for (const c of demos) assert.ok(c.includes('--rpc http://127.0.0.1:18545'), c);
  });
  it('--conditional with an edited config that does not serve it: said, and no line to try', () => {
    const text = banner({ ...BASE, configWritten: false, conditionalNotInConfig: true });
    assert.match(text, /conditional send {2}NOT served: --conditional was given, but \/d\/txgate\.json was edited by you/);
    assert.deepEqual(bannerCommands({ ...BASE, configWritten: false, conditionalNotInConfig: true }), bannerCommands(BASE));
  });
  it('on the default ports the demo line is plain `npm run demo`', () => {
    assert.deepEqual(bannerCommands({ ...BASE, port: 8080, anvilUrl: 'http://127.0.0.1:8545' }), ['npm run demo']);
  });
});
