/**
 * The WebSocket upgrade (`GET /` with `Upgrade: websocket`): the connection is admitted once, as
 * a submission would be (admission.ts: the Host picks the chain, X-Api-Key the account, its
 * grant), refused as HTTP answers; then the per-account connection cap.
 */
import type { HttpRequest, HttpResponse, us_socket_context_t } from 'uWebSockets.js';
import { keySha256 } from '../accounts/keys.js';
import { admit, refused, type AdmissionParts } from '../admission/admission.js';
import { type Exit, REJECT, reject } from '../base/errors.js';
import type { UwsPortParts } from '../http/port.js';
import { duplicateHeader } from '../http/framing.js';
import { announcesBody, H, writeAnswer } from '../http/write.js';
import type { ConnectionCounts } from '../limits/shared-tables.js';
import { quote } from '../log/log-line.js';
import { Connection } from './connection.js';

/** The upgrade refusal for a version other than 13, naming the one supported (RFC 6455 §4.4). */
const WS_VERSION = reject('websocket_version', undefined, undefined, [['sec-websocket-version', '13']]);

export interface UpgradeDeps {
  readonly port: UwsPortParts;
  readonly admission: AdmissionParts;
  /** Open connections per account, per process (shared by the worker threads where there are several). */
  readonly counts: ConnectionCounts;
  readonly maxConnectionsPerAccount: number;
  /** Whether the transport is draining its connections. */
  readonly draining: () => boolean;
}

export type Upgrade = (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => void;

/** The upgrade handler: the same refusals as the host, auth and grant stages give, as HTTP answers. */
export function createUpgrade(d: UpgradeDeps): Upgrade {
  // The cap's refusal naming the cap and its setting, built once.
  const full = reject(
    'too_many_connections',
    `Too many open WebSocket connections for this account: at most ${d.maxConnectionsPerAccount} on this edge (websocket.maxConnectionsPerAccount)`,
    { limit: d.maxConnectionsPerAccount, setting: 'websocket.maxConnectionsPerAccount' },
  );
  return (res, req, context) => {
    const host = req.getHeader(H.host);
    const apiKey = req.getHeader(H.apiKey);
    const secKey = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    const version = req.getHeader(H.wsVersion);
    const withBody = announcesBody(req);
    const dup = duplicateHeader(req);
    const reqId = d.port.ids.next();
    const refuse = (exit: Exit, account?: string, detail?: string): void =>
      writeAnswer(res, exit.status, exit.body('null'), { close: true, reqId, headers: exit.headers }, (written) =>
        d.port.requestLog.refused(
          reqId,
          'GET',
          '/',
          written ? exit.status : 0,
          exit.reason,
          `websocket upgrade${account === undefined ? '' : ` (account ${account})`}${detail === undefined ? '' : `: ${detail}`}`,
        ),
      );
    if (d.draining()) return void refuse(REJECT.draining);
    if (dup !== null) return void refuse(dup.exit, undefined, dup.detail);
    // RFC 6455 §4.2.2: another version is answered 426 with the one supported.
    if (version !== '13') return void refuse(WS_VERSION, undefined, `Sec-WebSocket-Version ${quote(version, 20)}`);
    // Bytes after an upgrade's head are frames: a body there is read one way by a proxy and another by uWS.
    if (withBody) return void refuse(REJECT.bad_framing, undefined, 'an upgrade with a body');
    const a = admit(d.admission, { host, apiKey });
    if (refused(a)) return void refuse(a.exit, a.account);
    const account = a.account.id;
    const counted = d.counts.acquire(account, d.maxConnectionsPerAccount);
    if (counted === 'full') return void refuse(full, account);
    const conn = new Connection(reqId, host, apiKey, keySha256(apiKey), account, a.chain.chainId);
    conn.counted = counted === 'counted';
    // uWS calls open() inside upgrade(); a connection that did not open gives its place back.
    res.cork(() => res.upgrade({ conn }, secKey, protocol, extensions, context));
    if (conn.ws === null && conn.counted) {
      conn.counted = false;
      d.counts.release(account);
    }
  };
}
