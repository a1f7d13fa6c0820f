/**
 * The profiler reads the stages from the pipeline itself (src/pipeline/probes.ts): with the
 * probes on, the service names every stage of its pipeline (src/stages/list.ts, then the
 * forward) and the answer, in order, in the slot map the profiler reads; a stage added to the
 * pipeline gets a slot and a part of its own with nothing written under bench/. Off (every
 * deployment), no probe is loaded and the stages are the pipeline's own objects.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import { attribute, groupsFor } from '../../bench/profile/attribute.js';
import { parseDump } from '../../bench/profile/dump.js';
import { tempDir } from '../support/temp-dir.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const root = join(import.meta.dirname, '..', '..', '..');
const skip =
  spawnSync('which', ['cc']).status !== 0 && process.env.CI !== 'true' ? 'no C compiler to build the probes (Debian: apt-get install -y gcc)' : false;

describe('the profile takes its stages from the pipeline', { skip }, () => {
  it("the service's stages and the answer, in order, in the slot map; a part for every name in it", () => {
    const dir = tempDir('txgate-probe-');
    const addon = join(dir, 'stage-probe.node');
    const built = spawnSync('bash', [join(root, 'scripts/build-probe.sh'), addon], { encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    const map = join(dir, 'slots.json');
    process.env.TXGATE_STAGE_PROBES = addon;
    process.env.TXGATE_STAGE_PROBES_MAP = map;
    const config = parseConfig({ chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }], workers: 1 }, dir, {});
    const log = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
    const names = createApp({ config, log }).http.stageNames;
    assert.ok(existsSync(map), 'the map is written as the pipeline is built');
    const slots = JSON.parse(readFileSync(map, 'utf8')) as Record<string, string>;
    assert.deepEqual(Object.values(slots), [...names, 'answer']);
    assert.ok(names.includes('decode') && names.at(-1) === 'forward');

    // A name the profiler has never seen (a stage added to the list) is a part of its own.
    const fresh = new Map([...Object.entries(slots).map(([k, v]) => [Number(k), v] as const), [40, 'a_new_stage'] as const]);
    const dump = parseDump(
      [
        'summary: 100000',
        'fn=(1) caller',
        'cfn=(2) txgate_probe_77',
        'calls=10 0',
        '0 2000',
        'cfn=(3) txgate_probe_calib',
        'calls=10 0',
        '0 5000',
        'cfn=(4) txgate_probe_50',
        'calls=10 0',
        '0 9000',
      ].join('\n'),
      groupsFor(64),
    );
    const a = attribute(dump, 10, fresh, 64);
    assert.equal(a.parts.a_new_stage, (9000 - 10 * 200) / 10);
  });
});
