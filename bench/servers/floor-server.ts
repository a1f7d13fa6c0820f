/**
 * The second reference of the load bench: the least a conforming answer costs in this stack,
 * written as one flat uWebSockets.js handler with no stages, contexts, metrics or options. It
 * does what the contract makes any implementation do, and nothing more:
 * - every request: read the headers needed (Host, Content-Length, Content-Type, X-Api-Key)
 *   while the request is alive, check the framing is unambiguous (one Content-Length), copy and UTF-8-decode the body, JSON.parse it and check the
 *   envelope, echo the id, send Content-Type and X-Request-Id;
 * - eth_chainId: the configured answer (not logged: txgate logs keep-alives at debug);
 * - a submission: the key's SHA-256 looked up (unknown: 401, the contract's error body and one
 *   log line); then the transaction decoded and verified (txgate's decoder in the signature mode
 *   txgate runs, `curve` by default: the cheapest conforming decode there is here), the tip
 *   checked (a transfer to the tip address), forwarded with undici's
 *   Pool.dispatch (txgate's HttpUpstream: the chosen client at its cheapest), the sequencer's hash
 *   checked, answered, and two log lines (request and audit).
 * Log lines are batched, one write per 20 ms, to the file given.
 *
 * What txgate costs over this floor is its structure (typed stages, the context, the body read
 * as a Later, metrics, the full envelope, grant, fee and rate-limit rules, forwarding rules);
 * what this floor costs over the bare echo is the contract itself.
 * Usage: node floor-server.js PORT LOGFILE [KEY_SHA256 SEQUENCER_URL TIP_ADDRESS MIN_TIP_WEI [curve|recover]]
 */
import { hash } from 'node:crypto';
import { openSync, writeSync } from 'node:fs';
import type { HttpResponse } from 'uWebSockets.js';
import { Exit, REJECT } from '../../src/base/errors.js';
import { HttpUpstream } from '../../src/upstreams/http/http-upstream.js';
import { initCrypto, uws } from '../../src/base/native.js';
import { classifyRawTxParam } from '../../src/stages/route.js';
import { TxDecoder } from '../../src/tx/decoder.js';
import { ascii, H } from '../../src/http/write.js';

const [portArg, logFile, keyHash, sequencerUrl, tipArg, minTipArg, signatureArg] = process.argv.slice(2);
const port = Number(portArg ?? 18101);
const logFd = openSync(logFile ?? '/dev/null', 'a');
const keys = new Map<string, string>(keyHash !== undefined ? [[keyHash, 'load']] : []); // key SHA-256 → account id
const sequencer = sequencerUrl !== undefined ? new HttpUpstream(sequencerUrl, 64) : null;
const tip = (tipArg ?? '').toLowerCase();
const minTip = BigInt(minTipArg ?? '0');
await initCrypto();
const decoder = new TxDecoder(4663, 'prague', { signature: signatureArg === 'recover' ? 'recover' : 'curve' });
const policy = { txTypes: new Set([2]) };

let pending = '';
setInterval(() => {
  if (pending === '') return;
  writeSync(logFd, pending);
  pending = '';
}, 20);
const pid = String(process.pid);
const log = (fields: string, msg: string) => {
  pending += '{"level":"info","time":' + Date.now() + ',"pid":' + pid + ',' + fields + ',"msg":"' + msg + '"}\n';
};

let seq = 0;
// Header names and values handed to uWS as bytes encoded once, as txgate does (a JS string is
// UTF-8-encoded by uWS.js on every call).
const CT = ascii('content-type');
const JSON_CT = ascii('application/json');
const REQ_ID = ascii('x-request-id');
const STATUS = new Map<string, Uint8Array>();
const statusBytes = (s: string) => STATUS.get(s) ?? STATUS.set(s, ascii(s)).get(s)!;
const answer = (res: HttpResponse, status: string, reqId: string, body: string) =>
  res.cork(() => {
    res.writeStatus(statusBytes(status)).writeHeader(CT, JSON_CT).writeHeader(REQ_ID, reqId).end(body);
  });

uws()
  .App()
  .post('/*', (res, req) => {
    const host = req.getHeader(H.host);
    const length = req.getHeader(H.contentLength);
    const type = req.getHeader(H.contentType);
    const key = req.getHeader(H.apiKey);
    // Unambiguous framing (RFC 9112 §6.3): one Content-Length, no Transfer-Encoding beside it.
    let framing = 0;
    req.forEach((k) => {
      if (k === 'content-length' || k === 'transfer-encoding') framing++;
    });
    const reqId = 'f-' + (++seq).toString(36);
    if (framing > 1) {
      res.cork(() =>
        res.writeStatus(statusBytes('400 Bad Request')).writeHeader(CT, JSON_CT).writeHeader(REQ_ID, reqId).end(REJECT.bad_framing.body('null'), true),
      );
      return;
    }
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
      const params = m.params ?? [];
      if (
        host === '' ||
        length === '' ||
        type !== 'application/json' ||
        m.jsonrpc !== '2.0' ||
        (typeof id !== 'number' && typeof id !== 'string') ||
        !Array.isArray(params)
      )
        return answer(res, '400 Bad Request', reqId, REJECT.invalid_request.body('null'));
      const idJson = JSON.stringify(id);
      if (m.method === 'eth_chainId') return answer(res, '200 OK', reqId, '{"jsonrpc":"2.0","id":' + idJson + ',"result":"0x1237"}');
      const done = (status: string, body: string, fields: string) => {
        if (!aborted) answer(res, status, reqId, body);
        log(
          '"reqId":"' +
            reqId +
            '","method":"eth_sendRawTransaction","status":' +
            status.slice(0, 3) +
            ',"us":' +
            Math.round((performance.now() - t0) * 1000) +
            fields,
          'request',
        );
      };
      const account = key === '' ? undefined : keys.get(hash('sha256', key, 'hex'));
      if (account === undefined) return done('401 Unauthorized', REJECT.unauthorized.body(idJson), ',"reason":"unauthorized","stage":"auth","chainId":4663');
      const raw = classifyRawTxParam(params[0]); // what the route stage accepts: 0x-hex (or shapes decode names)
      if (typeof raw !== 'string' || raw.charCodeAt(0) !== 48) return done('400 Bad Request', REJECT.invalid_params.body(idJson), ',"reason":"invalid_params"');
      const tx = decoder.decode(Buffer.from(raw.substring(2), 'hex'), policy);
      if (tx instanceof Exit) return done('400 Bad Request', tx.body(idJson), ',"reason":"' + tx.reason + '"');
      if (tx.to !== tip || tx.value < minTip) return done('402 Payment Required', REJECT.fee_rejected.body(idJson), ',"reason":"fee_rejected"');
      if (sequencer === null) return done('503 Service Unavailable', REJECT.upstream_unavailable.body(idJson), ',"reason":"upstream_unavailable"');
      const t1 = performance.now();
      void sequencer.call('eth_sendRawTransaction', '["' + raw + '"]', { timeoutMs: 5000, queueMs: 5000 }).then((a) => {
        const accepted = a.kind === 'result' && a.result === tx.hash;
        log(
          '"audit":"forward","reqId":"' +
            reqId +
            '","account":"' +
            account +
            '","tx":"' +
            tx.hash +
            '","chainId":4663,"sequencer":' +
            sequencer.labelJson +
            ',"outcome":"' +
            (accepted ? 'accepted' : 'fault') +
            '","ms":' +
            (performance.now() - t1).toFixed(3),
          'forward',
        );
        if (accepted) done('200 OK', '{"jsonrpc":"2.0","id":' + idJson + ',"result":"' + tx.hash + '"}', ',"account":"' + account + '","tx":"' + tx.hash + '"');
        else done('502 Bad Gateway', REJECT.upstream_error.body(idJson), ',"reason":"upstream_error"');
      });
    });
  })
  .listen('127.0.0.1', port, (s) => {
    if (s === false) process.exit(1);
    process.stdout.write('ready\n');
  });
