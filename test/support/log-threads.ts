/**
 * A process whose threads log as fast as they can (for test/e2e/log-lines-from-threads.test.ts): the main thread
 * starts `threads` worker threads wired as the service wires them (their lines go to this
 * thread's sink), each writing `lines` lines through the txgate logger, half pino lines and half
 * request lines (FastLog), some longer than a pipe's 4-KiB atomic write; the main thread writes
 * its own beside them. Usage: node log-threads.js <threads> <lines> [pretty]
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { setImmediate as yieldNow } from 'node:timers/promises';
import { acceptWorkerLog, createLogger, flushLogs } from '../../src/log/log.js';
import { FastLog } from '../../src/log/log-line.js';

interface Data {
  readonly index: number;
  readonly lines: number;
  readonly pretty: boolean;
}

async function write(log: ReturnType<typeof createLogger>, who: string, lines: number): Promise<void> {
  const fast = new FastLog(log);
  for (let i = 0; i < lines; i++) {
    const pad = i % 97 === 0 ? 'x'.repeat(6000) : 'y'.repeat(i % 300);
    if (i % 2 === 0) log.info({ seq: i, who, pad }, 'pino line');
    else fast.line('info')?.str('reqId', `${who}-${i}`).json('seq', i).str('who', who).str('pad', pad).end('request');
    if (i % 200 === 199) await yieldNow();
  }
}

if (isMainThread) {
  const threads = Number(process.argv[2]);
  const lines = Number(process.argv[3]);
  const pretty = process.argv[4] === 'pretty';
  const log = createLogger({ level: 'info', pretty, colorize: false });
  const workers = Array.from({ length: threads }, (_, index) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { index, lines, pretty } satisfies Data });
    w.on('message', acceptWorkerLog);
    return new Promise<void>((resolve) => w.once('exit', () => resolve()));
  });
  await write(log, 'main', lines);
  await Promise.all(workers);
  flushLogs(log, () => process.exit(0), 60_000);
} else {
  const d = workerData as Data;
  const log = createLogger({ level: 'info', pretty: d.pretty, colorize: false }).child({ worker: d.index });
  await write(log, `w${d.index}`, d.lines);
  flushLogs(log, () => parentPort!.close(), 60_000);
}
