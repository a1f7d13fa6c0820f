/**
 * Busy polling (config `busyPoll`): the spinner runs at nice 19 (never competing with the server
 * thread), parks when no request came for its idle time, is woken by the next request, and
 * stops with the service; it is refused under a CPU quota. A service with it on answers as usual.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusyPoll, cpuQuota } from '../../src/base/busy-poll.js';
import { eventually, newKey, startGate } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

/** Threads of this process running at nice 19 (field 19 of /proc/self/task/TID/stat). */
function niceThreads(): string[] {
  return readdirSync('/proc/self/task').filter((tid) => readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16] === '19');
}

describe('busy polling', () => {
  it('spins at the lowest priority, parks when idle, wakes on a request, stops', async () => {
    const b = new BusyPoll({ idleMs: 50 });
    await b.started;
    assert.equal(b.status().spinning, true);
    assert.ok(b.tid > 0 && b.tid !== process.pid);
    assert.equal(getPriority(b.tid), 19, 'the spinner thread runs at nice 19');
    assert.equal(getPriority(process.pid), 0, 'the server thread keeps its priority');
    await eventually(() => b.status().parked, 5000);
    b.touch();
    await eventually(() => !b.status().parked, 5000);
    await b.stop();
  });

  it('is refused under a CPU quota (cgroup v2 cpu.max or v1 cfs_quota_us), allowed without', () => {
    const dir = mkdtempSync(join(tmpdir(), 'txgate-cg-'));
    try {
      writeFileSync(join(dir, 'cpu.max'), '200000 100000\n');
      assert.equal(cpuQuota(dir), '200000 100000');
      writeFileSync(join(dir, 'cpu.max'), 'max 100000\n');
      assert.equal(cpuQuota(dir), null);
      rmSync(join(dir, 'cpu.max'));
      mkdirSync(join(dir, 'cpu'));
      writeFileSync(join(dir, 'cpu', 'cpu.cfs_quota_us'), '50000\n');
      assert.equal(cpuQuota(dir), 'cfs_quota_us 50000');
      writeFileSync(join(dir, 'cpu', 'cpu.cfs_quota_us'), '-1\n');
      assert.equal(cpuQuota(dir), null);
      assert.equal(cpuQuota(join(dir, 'missing')), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a service with busyPoll on answers as usual', async () => {
    const stub = await new StubSequencer().start();
    const key = newKey();
    const gate = await startGate({
      accounts: [{ id: 'bp', keys: [key] }],
      config: { busyPoll: true, chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [stub.url] }] },
    });
    try {
      assert.equal((await rpc(gate.port, 'eth_chainId', [])).json.result, '0x1237');
      assert.ok(niceThreads().length > 0, 'the service started a spinner thread at nice 19');
      const raw = await sign1559({ nonce: 0 });
      const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
      assert.equal(r.status, 200);
      assert.match(r.json.result, /^0x[0-9a-f]{64}$/);
    } finally {
      await gate.stop();
      await stub.stop();
    }
  });
});
