/** Throw-away certificates for TLS tests, made with Debian's openssl: a CA, and leaves it signs. */
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeCaFiles } from '../../src/dev/dev-tls.js';

export interface TestCa {
  readonly dir: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly pem: Buffer;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });

export function makeCa(dir: string, name = 'txgate test CA'): TestCa {
  const certFile = join(dir, `${name.replace(/\W/g, '_')}.pem`);
  const keyFile = join(dir, `${name.replace(/\W/g, '_')}.key`);
  makeCaFiles(keyFile, certFile, name, 2);
  return { dir, certFile, keyFile, pem: readFileSync(certFile) };
}

export interface Leaf {
  readonly certFile: string;
  readonly keyFile: string;
  /** The leaf's SHA-256 fingerprint, as node's X509Certificate says it. */
  readonly fingerprint: string;
}

export interface LeafOptions {
  /** Written under this file stem (default: the name). */
  readonly stem?: string;
  /** Encrypt the key with this passphrase. */
  readonly passphrase?: string;
  readonly days?: number;
}

/** A leaf for `name` (and localhost, 127.0.0.1), signed by `ca`; files written atomically (temp, then rename). */
export function makeLeaf(ca: TestCa, name: string, o: LeafOptions = {}): Leaf {
  const stem = join(ca.dir, o.stem ?? name);
  const tmpKey = `${stem}.key.new`;
  const csr = `${stem}.csr`;
  const ext = `${stem}.ext`;
  const tmpCert = `${stem}.pem.new`;
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', tmpKey, '-out', csr, '-subj', `/CN=${name}`]);
  if (o.passphrase !== undefined) {
    openssl(['pkey', '-in', tmpKey, '-out', `${tmpKey}.enc`, '-aes256', '-passout', `pass:${o.passphrase}`]);
    renameSync(`${tmpKey}.enc`, tmpKey);
  }
  writeFileSync(ext, `subjectAltName=DNS:${name},DNS:localhost,IP:127.0.0.1\n`);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-CAcreateserial',
    '-out',
    tmpCert,
    '-days',
    String(o.days ?? 1),
    '-extfile',
    ext,
  ]);
  const fingerprint = execFileSync('openssl', ['x509', '-in', tmpCert, '-noout', '-fingerprint', '-sha256']).toString().trim().split('=')[1]!;
  renameSync(tmpCert, `${stem}.pem`);
  renameSync(tmpKey, `${stem}.key`);
  return { certFile: `${stem}.pem`, keyFile: `${stem}.key`, fingerprint };
}
