/**
 * Why a TLS connection to txgate failed, named from the error Node's TLS layer raised (its
 * `code`, here or on its `cause`): the server's certificate not trusted (a private CA not given
 * in the `ca` option nor NODE_EXTRA_CA_CERTS), expired or not yet valid, issued for another
 * name, or no TLS at all on the other side (an https:// or wss:// URL on a plain port, or the
 * reverse). A handshake that failed never carried the request: nothing was sent.
 */

export type TlsCause = 'certificate_untrusted' | 'certificate_expired' | 'hostname_mismatch' | 'tls_protocol';

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REJECTED',
  'INVALID_CA',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/** What each cause means and what the client does about it: the sentence its error carries. */
export const TLS_CAUSES: Readonly<Record<TlsCause, string>> = {
  certificate_untrusted:
    "the server's certificate is not signed by a CA this client trusts: give the deployment's CA (the kit's and adapters' `ca` option, or NODE_EXTRA_CA_CERTS=ca.pem)",
  certificate_expired: "the server's certificate is expired or not yet valid: the deployment must renew it (or this host's clock is wrong)",
  hostname_mismatch: "the server's certificate is for another name than the URL's host: use the name it was issued for",
  tls_protocol: 'the other side does not speak TLS as expected: an https:// or wss:// URL on a plain HTTP port (use http:// or ws://), or the reverse',
};

/** The cause of a failed connection, or null where it is not a TLS failure. */
export function tlsCauseOf(e: unknown): TlsCause | null {
  for (let err = e as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; err != null && depth < 4; depth++) {
    const code = typeof err.code === 'string' ? err.code : '';
    if (UNTRUSTED.has(code)) return 'certificate_untrusted';
    if (EXPIRED.has(code)) return 'certificate_expired';
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'hostname_mismatch';
    if (code.startsWith('ERR_SSL_') || (code === 'EPROTO' && /SSL|TLS|wrong version number|packet length/i.test(String(err.message)))) return 'tls_protocol';
    err = err.cause as typeof err;
  }
  return null;
}
