/**
 * The batched stdout sink: every line arrives, whole and in order; batches are written when full
 * or after the flush delay; beyond the bound lines are dropped and counted; a closed descriptor
 * loses lines (counted) without throwing. (The CLI test checks its last lines reach a pipe.)
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LogSink } from '../../src/log/log-sink.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('txgate-sink-');
let n = 0;
const file = () => join(dir, `out-${n++}.log`);
const flushed = (s: LogSink) => new Promise<void>((resolve) => s.flush(() => resolve()));

describe('LogSink', () => {
  it('writes every line, in order, once flushed', async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LogSink({ fd, batchBytes: 1000, flushMs: 1000 });
    const lines = Array.from({ length: 5000 }, (_, i) => `{"i":${i},"pad":"${'x'.repeat(i % 50)}"}\n`);
    for (const l of lines) sink.write(l);
    await flushed(sink);
    closeSync(fd);
    assert.equal(readFileSync(path, 'utf8'), lines.join(''));
    assert.equal(sink.dropped, 0);
  });

  it('holds a short batch until the flush delay, then writes it', async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LogSink({ fd, batchBytes: 1 << 20, flushMs: 30 });
    sink.write('{"a":1}\n');
    assert.equal(readFileSync(path, 'utf8'), '', 'not written at once');
    for (let i = 0; i < 250 && readFileSync(path, 'utf8') === ''; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(readFileSync(path, 'utf8'), '{"a":1}\n', 'written by the timer, with no further line or flush');
    closeSync(fd);
  });

  it('drops and counts lines beyond the bound', async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LogSink({ fd, batchBytes: 1 << 20, flushMs: 1000, maxBytes: 100 });
    const line = `{"x":"${'y'.repeat(20)}"}\n`; // 29 characters: three fit in 100
    for (let i = 0; i < 10; i++) sink.write(line);
    assert.equal(sink.dropped, 7);
    sink.flushSync();
    closeSync(fd);
    const [note, ...rest] = readFileSync(path, 'utf8').split('\n');
    assert.equal(rest.join('\n'), line.repeat(3), 'the lines kept, whole');
    assert.equal(JSON.parse(note!).dropped, 7, 'a line reports the lines dropped');
  });

  it('reports dropped lines once, at the head of the next batch written', async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LogSink({ fd, batchBytes: 1 << 20, flushMs: 1000, maxBytes: 40 });
    for (let i = 0; i < 5; i++) sink.write(`{"i":${i},"p":"${'z'.repeat(20)}"}\n`);
    await flushed(sink);
    sink.write('{"after":1}\n');
    await flushed(sink);
    closeSync(fd);
    const lines = readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((l) => l.msg ?? l.i ?? l.after),
      ['log lines dropped: stdout could not keep up', 0, 1],
    );
    assert.equal(lines[0]!.dropped, 4);
  });

  it('in a worker thread, hands whole batches on instead of writing (forward)', async () => {
    const batches: string[] = [];
    const sink = new LogSink({ fd: -1, batchBytes: 30, flushMs: 1000, forward: (b) => batches.push(b) });
    for (let i = 0; i < 10; i++) sink.write(`{"i":${i}}\n`);
    await flushed(sink);
    assert.ok(batches.length > 1);
    for (const b of batches) assert.ok(b.endsWith('\n'));
    assert.equal(batches.join(''), Array.from({ length: 10 }, (_, i) => `{"i":${i}}\n`).join(''));
  });

  it('at exit, does not block behind a write still in flight: those lines are counted as dropped', async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LogSink({ fd, batchBytes: 8, flushMs: 1000 });
    sink.write('{"a":1}\n{"a":2}\n'); // over the batch size: an async write is now in flight
    sink.write('{"a":3}\n');
    sink.flushSync(); // must not write behind it (or block): the pending line is counted
    assert.equal(sink.dropped, 1);
    await flushed(sink);
    closeSync(fd);
    assert.equal(readFileSync(path, 'utf8'), '{"a":1}\n{"a":2}\n');
  });

  it('counts lines lost to a closed descriptor and keeps accepting', async () => {
    const fd = openSync(file(), 'w');
    closeSync(fd);
    const sink = new LogSink({ fd, batchBytes: 10, flushMs: 1000 });
    sink.write('{"a":1}\n{"a":2}\n');
    await flushed(sink);
    assert.equal(sink.dropped, 2);
    assert.equal(sink.write('{"a":3}\n'), true);
  });
});
