/**
 * Every log line whole, whatever the threads and the reader's speed: a process with 2 and 4
 * worker threads logging as fast as they can into a pipe read slowly (test/support/log-threads.ts)
 * writes only complete lines, each one JSON object (or, pretty, each record whole); none is lost
 * but those the bounded buffer drops, which are counted and reported by a line of their own.
 * Worker threads' lines (pino's and the request lines alike) carry their `worker`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const script = join(import.meta.dirname, '../support/log-threads.js');

/** Runs the script, reading its stdout slowly (a pause after every chunk); resolves with all of it. */
function runSlowlyRead(threads: number, lines: number, pretty = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, String(threads), String(lines), ...(pretty ? ['pretty'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => {
      chunks.push(c);
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), 4);
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`exit ${code}`))));
  });
}

describe('log lines from several threads into a slow pipe', () => {
  for (const threads of [2, 4]) {
    it(`${threads} worker threads: every line parses, every line is accounted for, worker lines say which worker`, async () => {
      const lines = 6000;
      const out = await runSlowlyRead(threads, lines);
      assert.ok(out.endsWith('\n'), 'the output ends with a whole line');
      const records: Record<string, unknown>[] = [];
      for (const [i, l] of out.split('\n').slice(0, -1).entries()) {
        let r: unknown;
        try {
          r = JSON.parse(l);
        } catch {
          assert.fail(`line ${i + 1} is not one JSON object: ${l.slice(0, 200)}`);
        }
        records.push(r as Record<string, unknown>);
      }
      const dropped = records.filter((r) => r.msg === 'log lines dropped: stdout could not keep up').reduce((n, r) => n + (r.dropped as number), 0);
      const logged = records.filter((r) => r.who !== undefined);
      assert.equal(logged.length + dropped, (threads + 1) * lines, `every line written or counted as dropped (${dropped} dropped)`);
      for (let w = 0; w < threads; w++) {
        const mine = logged.filter((r) => r.who === `w${w}`);
        assert.ok(mine.length > 0);
        for (const r of mine) assert.equal(r.worker, w, `a worker's ${r.msg} line carries its worker`);
        // Each thread's lines in the order it wrote them.
        const seqs = mine.map((r) => r.seq as number);
        assert.deepEqual(
          seqs,
          [...seqs].sort((a, b) => a - b),
        );
      }
      for (const r of logged.filter((r) => r.who === 'main')) assert.equal(r.worker, undefined);
    });
  }

  it('pretty output, 2 threads: each record whole (its header line, then its own fields)', async () => {
    const out = await runSlowlyRead(2, 2000, true);
    const lines = out.split('\n').slice(0, -1);
    let header: RegExpExecArray | null = null;
    let records = 0;
    for (const l of lines) {
      const h = /^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN): (pino line|request|log lines dropped)/.exec(l);
      if (h !== null) {
        header = h;
        records++;
        continue;
      }
      assert.ok(header !== null && /^ {4}\S/.test(l), `a field line inside a record: ${JSON.stringify(l.slice(0, 120))}`);
    }
    assert.ok(records > 0);
  });
});
