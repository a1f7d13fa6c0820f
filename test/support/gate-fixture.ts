/**
 * The file-level gate fixture: `useGate` starts a txgate in this process before the file's tests
 * and stops it after them (`useStubGates`: a gate of each test's own over its own stub
 * sequencers, stopped after the test), and every file that starts a txgate (here, as the CLI, or through
 * `npm start`) checks, after its last test, that no API key handed out in it (issuedKeys) appears
 * in any captured line: the gates' logs and the processes' stdout and stderr.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, afterEach, before } from 'node:test';
import { capturedLogs, issuedKeys, liveGates, startGate, stubChain, type Gate, type GateOptions } from './harness.js';
import { liveProcesses, processOutputs } from './processes.js';
import { StubSequencer } from './stub-sequencer.js';

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

/** Starts `n` stub sequencers and a gate with one chain over them (`stubChain(urls, forward, fields)`, `extra` config fields beside it). */
export type StubGates = (
  n: number,
  forward?: Record<string, unknown>,
  fields?: Record<string, unknown>,
  extra?: Record<string, unknown>,
) => Promise<{ gate: Gate; stubs: StubSequencer[] }>;

/** What stops after the test: a test adds a gate or a stub it started itself. */
export interface OpenParts {
  readonly gates: Gate[];
  readonly stubs: StubSequencer[];
}

/**
 * Gates of a test's own, for a file whose every test wants its own configuration and its own
 * faulty sequencers: each call starts stubs and a gate over them (`base`: the accounts, the
 * internal listener), and all of them stop after the test that started them, with any a test adds to `open`. Registers the file's
 * key check.
 */
export function useStubGates(base: Pick<GateOptions, 'accounts' | 'internal'>): StubGates & { readonly open: OpenParts } {
  const open: OpenParts = { gates: [], stubs: [] };
  keysNeverLogged();
  afterEach(async () => {
    for (const g of open.gates.splice(0)) await g.stop();
    for (const s of open.stubs.splice(0)) await s.stop();
  });
  const start: StubGates = async (n, forward = {}, fields = {}, extra = {}) => {
    const stubs = await Promise.all(Array.from({ length: n }, () => new StubSequencer().start()));
    open.stubs.push(...stubs);
    const gate = await startGate({
      ...base,
      config: {
        chains: [
          stubChain(
            stubs.map((s) => s.url),
            forward,
            fields,
          ),
        ],
        ...extra,
      },
    });
    open.gates.push(gate);
    return { gate, stubs };
  };
  return Object.assign(start, { open });
}

function endProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
  return exited.finally(() => clearTimeout(t));
}
