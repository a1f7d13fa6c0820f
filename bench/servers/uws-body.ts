/** Reads a POST body in a uWS handler (copying chunks), then calls `done` unless aborted. */
import type { HttpResponse } from 'uWebSockets.js';

export function onBody(res: HttpResponse, done: (body: Buffer, aborted: () => boolean) => void): void {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  const chunks: Buffer[] = [];
  res.onData((ab, last) => {
    chunks.push(Buffer.from(new Uint8Array(ab)));
    if (last && !aborted) done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), () => aborted);
  });
}
