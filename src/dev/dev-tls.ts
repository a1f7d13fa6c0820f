/**
 * `npm start -- --tls`: a development CA, kept in DIR/tls/ (made once, so it is trusted once),
 * and a throw-away certificate for localhost and 127.0.0.1 it signs, made at every start.
 * Made with openssl (Debian's `openssl` package).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DevTls {
  /** The development CA's certificate: what a client trusts. */
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });

/** A self-signed P-256 CA (`CN=subject`, valid `days`) written to `keyFile` and `certFile` (the TLS tests make theirs with it too). */
export function makeCaFiles(keyFile: string, certFile: string, subject: string, days: number): void {
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    String(days),
    '-subj',
    `/CN=${subject}`,
  ]);
}

/** The CA (kept) and a fresh server certificate; throws one line when openssl is missing or fails. */
export function makeDevTls(dir: string): DevTls {
  const tls = join(dir, 'tls');
  mkdirSync(tls, { recursive: true, mode: 0o700 });
  const caFile = join(tls, 'ca.pem');
  const caKey = join(tls, 'ca.key');
  const certFile = join(tls, 'server.pem');
  const keyFile = join(tls, 'server.key');
  try {
    if (!existsSync(caFile) || !existsSync(caKey)) {
      // Valid for a year, for development only: never trust it beyond this machine.
      makeCaFiles(caKey, caFile, 'txgate development CA', 365);
    }
    const csr = join(tls, 'server.csr');
    const ext = join(tls, 'server.ext');
    writeFileSync(ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
    openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${keyFile}.new`, '-out', csr, '-subj', '/CN=localhost']);
    openssl(['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-out', `${certFile}.new`, '-days', '30', '-extfile', ext]);
    renameSync(`${keyFile}.new`, keyFile);
    renameSync(`${certFile}.new`, certFile);
    rmSync(csr, { force: true });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') throw new Error('--tls needs openssl to make its certificates (Debian: apt-get install openssl)');
    throw new Error(`--tls: openssl failed: ${(err.stderr?.toString() ?? err.message).trim().split('\n')[0]}`);
  }
  return { caFile, certFile, keyFile };
}
