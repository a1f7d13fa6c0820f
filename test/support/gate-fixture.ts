/**
 * The file-level gate fixture: `useGate` starts a txgate in this process before the file's tests
 * and stops it after them, and every file that starts a txgate (here, as the CLI, or through
 * `npm start`) checks, after its last test, that no API key handed out in it (issuedKeys) appears
 * in any captured line: the gates' logs and the processes' stdout and stderr.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { capturedLogs, issuedKeys, liveGates, startGate, type Gate, type GateOptions } from './harness.js';
import { liveProcesses, processOutputs } from './processes.js';

let checking = false;
let exempt: readonly string[] = [];

/**
 * Registers the file's key check (once per file, whatever the calls): after the file's tests it
 * stops every gate still running and ends every txgate process still running (so their last
 * lines are captured too), then asserts that no issued key is in any captured line. `except`:
 * keys that are public by design (the development key `npm start` prints).
 */
export function keysNeverLogged(opts: { except?: readonly string[] } = {}): void {
  exempt = [...exempt, ...(opts.except ?? [])];
  if (checking) return;
  checking = true;
  after(async () => {
    await Promise.all([...liveGates].map((g) => g.stop()));
    await Promise.all([...liveProcesses].map(endProcess));
    const all = [...capturedLogs, ...processOutputs.map((out) => out())].join('\n');
    assert.deepEqual(
      issuedKeys.filter((k) => !exempt.includes(k) && all.includes(k)),
      [],
      'an API key appeared in a captured log line or process output',
    );
  });
}

/**
 * A gate for the file (or for the describe it is called in): started in a `before` hook, stopped
 * in an `after` hook, with the file's key check registered. Options given as a function are
 * computed in that hook, so the function may first start what the gate needs (a stub sequencer,
 * an anvil) and name it: node:test (Node 20) runs a file's top-level `before` hooks concurrently,
 * so another top-level hook cannot be relied on to have run first. The object returned stands
 * for the gate from the first test on; reading it before the hook ran throws.
 */
export function useGate(opts: GateOptions | (() => GateOptions | Promise<GateOptions>) = {}): Gate {
  let gate: Gate | undefined;
  keysNeverLogged();
  before(async () => {
    gate = await startGate(typeof opts === 'function' ? await opts() : opts);
  });
  after(() => gate?.stop());
  return new Proxy({} as Gate, {
    get(_, name) {
      if (gate === undefined) throw new Error(`useGate: the gate is started in a before hook; ${String(name)} was read before it ran`);
      return Reflect.get(gate, name);
    },
  });
}

function endProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
  return exited.finally(() => clearTimeout(t));
}
