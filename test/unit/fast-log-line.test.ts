/**
 * The fast log line (src/log/log-line.ts): its fields make valid JSON with the keys and values given
 * (a key's prefix is built once and reused), and the audit line's milliseconds are the text
 * String(us / 1000) gives, without the number printer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { FastLog, LogLine, millisText, piece } from '../../src/log/log-line.js';

describe('log line', () => {
  it('fields in order, each key with its value, the same on a second line with the same keys', () => {
    const out: string[] = [];
    const line = new LogLine({ write: (s) => out.push(s) });
    for (const n of [1, 2]) {
      line.s = '{"level":"info"';
      line
        .str('reqId', `r-${n}`)
        .json('status', 200 + n)
        .text('detail', `a "quoted" \n line ${n}`)
        .json('ok', true)
        .end('request');
    }
    assert.deepEqual(
      out.map((s) => JSON.parse(s)),
      [1, 2].map((n) => ({ level: 'info', reqId: `r-${n}`, status: 200 + n, detail: `a "quoted" \n line ${n}`, ok: true, msg: 'request' })),
    );
  });

  it('any order of string, text and JSON fields, ending on any of them, reads back as written (property)', () => {
    const field = fc.record({
      kind: fc.constantFrom('str', 'text', 'json'),
      key: fc.constantFrom('reqId', 'tx', 'status', 'detail', 'account', 'us'),
      v: fc.string({ maxLength: 12 }),
      n: fc.integer(),
    });
    fc.assert(
      fc.property(fc.array(field, { maxLength: 8 }), fc.constantFrom('request', 'accepted', 'forward'), (fields, msg) => {
        const out: string[] = [];
        const line = new LogLine({ write: (s) => out.push(s) });
        // Twice on one line object: nothing of the first line's last field is carried into the second.
        for (let k = 0; k < 2; k++) {
          line.s = '{"level":"info"';
          const want: Record<string, unknown> = { level: 'info' };
          for (const f of fields) {
            const safe = f.v.replace(/[^a-z0-9]/gi, 'x');
            if (f.kind === 'str') line.str(f.key, safe);
            else if (f.kind === 'text') line.text(f.key, f.v);
            else line.json(f.key, f.n);
            want[f.key] = f.kind === 'str' ? safe : f.kind === 'text' ? f.v : f.n;
          }
          line.end(msg);
          assert.ok(out[k]!.endsWith('}\n'));
          assert.deepEqual(JSON.parse(out[k]!), { ...want, msg });
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("each line starts with its own level, a time and the logger's bound fields, whatever level the line before had", () => {
    const out: string[] = [];
    const fast = new FastLog(pino({ level: 'info' }, { write: (s: string) => void out.push(s) }).child({ worker: 3 }));
    const levels = ['info', 'warn', 'info', 'info', 'error', 'debug', 'warn'] as const;
    const before = Date.now();
    for (const [i, level] of levels.entries()) fast.line(level)?.json('n', i).end('m');
    const after = Date.now();
    const lines = out.map((l) => JSON.parse(l) as { level: string; time: number; pid: number; worker: number; n: number });
    // debug is below the logger's level: no line.
    assert.deepEqual(
      lines.map((l) => [l.level, l.n, l.pid, l.worker]),
      levels.flatMap((level, i) => (level === 'debug' ? [] : [[level, i, process.pid, 3]])),
    );
    for (const l of lines) assert.ok(l.time >= before && l.time <= after);
  });

  it('a line started with its request id (lineOf) is, character for character, the line with reqId written first, whatever level and millisecond came before', async () => {
    const out: string[] = [];
    const fast = new FastLog(pino({ level: 'info' }, { write: (s: string) => void out.push(s) }));
    const levels = ['info', 'info', 'warn', 'debug', 'info', 'error'] as const;
    for (const [i, level] of levels.entries()) {
      if (i === 4) await new Promise((r) => setTimeout(r, 2)); // another millisecond
      const a = fast.lineOf(level, `r-${i}`);
      const b = fast.line(level);
      assert.equal(a === null, level === 'debug');
      assert.equal(b === null, level === 'debug');
      a?.json('n', i).str('tx', '0xab').end('m');
      b?.str('reqId', `r-${i}`).json('n', i).str('tx', '0xab').end('m');
      const untimed = (l: string) => l.replace(/"time":\d+/, '"time":0');
      if (a !== null) assert.equal(untimed(out.at(-2)!), untimed(out.at(-1)!));
    }
    assert.equal(out.length, 10);
    for (const l of out) assert.ok(JSON.parse(l).reqId.startsWith('r-'));
    // lineAfter: any piece left open, alternating (the start kept is the last piece's), as line() then strAfter.
    out.length = 0;
    const pieces = [piece(',"audit":"forward","reqId":"'), piece(',"a":1,"b":"')];
    for (let i = 0; i < 6; i++) {
      const p = pieces[i % 3 === 0 ? 0 : 1]!;
      fast.lineAfter('info', p, `v-${i}`)!.json('n', i).end('m');
      fast.line('info')!.strAfter(p, `v-${i}`).json('n', i).end('m');
      const untimed = (l: string) => l.replace(/"time":\d+/, '"time":0');
      assert.equal(untimed(out.at(-2)!), untimed(out.at(-1)!));
      assert.ok(JSON.parse(out.at(-1)!));
    }
  });

  it('milliseconds from whole microseconds: the text String(us / 1000) gives (property)', () => {
    for (let us = 0; us < 20_000; us++) assert.equal(millisText(us), String(us / 1000));
    fc.assert(
      fc.property(fc.oneof(fc.nat(2 ** 31 - 1), fc.integer({ min: 2 ** 31, max: 2 ** 45 })), (us) => {
        assert.equal(millisText(us), String(us / 1000));
      }),
      { numRuns: 5000 },
    );
  });
});
