/**
 * The second reference of the load bench: the least a conforming answer costs in this stack,
 * written as one flat uWebSockets.js handler with no stages, contexts or metrics. It does what
 * the contract makes any implementation do for the two cheapest scenarios, and nothing more:
 * read the headers it needs (Host, Content-Length, Content-Type, X-Api-Key) while the request
 * is alive, copy and UTF-8-decode the body, JSON.parse it and check the envelope, echo the id,
 * send Content-Type and X-Request-Id; for a submission, hash the key (SHA-256), look it up and
 * answer 401 with the contract's error body and one log line (batched, one write per 20 ms,
 * to the file given). eth_chainId keep-alives are not logged (txgate logs them at debug).
 *
 * What txgate costs over this floor is its structure (typed stages, the context, the body read
 * as a Later, metrics, the full envelope checks); what this floor costs over the bare echo is
 * the contract itself. Usage: node floor-server.js PORT LOGFILE
 */
import { hash } from 'node:crypto';
import { openSync, writeSync } from 'node:fs';
import { REJECT } from '../src/errors.js';
import { uws } from '../src/native.js';

const port = Number(process.argv[2] ?? 18101);
const logFd = openSync(process.argv[3] ?? '/dev/null', 'a');
const keys = new Map<string, string>(); // key SHA-256 → account id: none known, every key is refused
let pending = '';
setInterval(() => {
  if (pending === '') return;
  writeSync(logFd, pending);
  pending = '';
}, 20);

let seq = 0;
const pid = String(process.pid);
const answer = (res: import('uWebSockets.js').HttpResponse, status: string, reqId: string, body: string) =>
  res.cork(() => {
    res.writeStatus(status).writeHeader('content-type', 'application/json').writeHeader('x-request-id', reqId).end(body);
  });

uws()
  .App()
  .post('/*', (res, req) => {
    const host = req.getHeader('host');
    const length = req.getHeader('content-length');
    const type = req.getHeader('content-type');
    const key = req.getHeader('x-api-key');
    const reqId = 'f-' + (++seq).toString(36);
    const t0 = performance.now();
    let aborted = false;
    res.onAborted(() => (aborted = true));
    res.onData((ab, last) => {
      if (!last || aborted) return; // the bench's bodies come in one chunk
      let m: Record<string, unknown>;
      try {
        m = JSON.parse(Buffer.from(ab).toString('utf8')) as Record<string, unknown>;
      } catch {
        return answer(res, '400 Bad Request', reqId, REJECT.parse_error.body('null'));
      }
      const id = m.id;
      if (host === '' || length === '' || type !== 'application/json' || m.jsonrpc !== '2.0' || (typeof id !== 'number' && typeof id !== 'string') || !Array.isArray(m.params ?? []))
        return answer(res, '400 Bad Request', reqId, REJECT.invalid_request.body('null'));
      const idJson = JSON.stringify(id);
      if (m.method === 'eth_chainId') return answer(res, '200 OK', reqId, '{"jsonrpc":"2.0","id":' + idJson + ',"result":"0x1237"}');
      const account = key === '' ? undefined : keys.get(hash('sha256', key, 'hex'));
      if (account === undefined) {
        answer(res, '401 Unauthorized', reqId, REJECT.unauthorized.body(idJson));
        pending +=
          '{"level":"info","time":' + Date.now() + ',"pid":' + pid + ',"reqId":"' + reqId + '","method":"eth_sendRawTransaction","status":401,"us":' +
          Math.round((performance.now() - t0) * 1000) + ',"reason":"unauthorized","stage":"auth","chainId":4663,"msg":"rejected"}\n';
        return;
      }
      answer(res, '500 Internal Server Error', reqId, REJECT.internal_error.body(idJson)); // no account exists here
    });
  })
  .listen('127.0.0.1', port, (s) => {
    if (s === false) process.exit(1);
    process.stdout.write('ready\n');
  });
