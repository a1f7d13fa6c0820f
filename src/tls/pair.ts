/**
 * A certificate and its key, read and checked before uWS is handed them: the chain parses, the
 * key parses (with its passphrase, if encrypted), the key is the certificate's, and the
 * certificate is valid now. Whatever is wrong is one line naming the file; the passphrase never
 * appears in it. The bytes checked are the bytes served: uWS reads them from a private copy
 * (stage), not from the operator's path, which may change between the check and the read.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where a certificate comes from (the default one, or a `hosts` entry). */
export interface PairSource {
  /** How the operator names it in the configuration (`listen.tls`, `listen.tls.hosts[0]`). */
  readonly field: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** The key's passphrase (from the environment), or null. */
  readonly passphrase: string | null;
}

export interface CertPair {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** SHA-256 of the certificate and key files' bytes: a rotation is a change of it. */
  readonly digest: string;
  /** The leaf's notAfter, in Unix seconds. */
  readonly notAfter: number;
  /** The leaf's SHA-256 fingerprint (as openssl prints it), for the log. */
  readonly fingerprint: string;
  readonly subject: string;
}

export class PairError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PairError';
  }
}

const why = (e: unknown) => ((e as NodeJS.ErrnoException).code ?? (e as Error).message).toString().split('\n')[0]!;

function readOrThrow(path: string, what: string, field: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new PairError(`${field}: cannot read the ${what} ${path} (${why(e)})`);
  }
}

/** The files' bytes only, for a cheap "did anything change" before the full check. */
export function digestOf(src: PairSource): string | null {
  try {
    return createHash('sha256').update(readFileSync(src.certFile)).update('\0').update(readFileSync(src.keyFile)).digest('hex');
  } catch {
    return null;
  }
}

/** Reads and checks a pair; a PairError with one line saying what is wrong. */
export function loadPair(src: PairSource, nowMs = Date.now()): CertPair {
  const { field } = src;
  const cert = readOrThrow(src.certFile, 'certificate', field);
  const key = readOrThrow(src.keyFile, 'key', field);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    throw new PairError(`${field}: ${src.certFile} is not a PEM certificate (${why(e)})`);
  }
  let keyObject: ReturnType<typeof createPrivateKey>;
  try {
    keyObject = createPrivateKey(src.passphrase === null ? { key } : { key, passphrase: src.passphrase });
  } catch (e) {
    const encrypted = /encrypted|passphrase|bad decrypt/i.test(String((e as Error).message)) || key.includes('ENCRYPTED');
    throw new PairError(
      encrypted
        ? `${field}: the key ${src.keyFile} is encrypted and ${src.passphrase === null ? 'no passphraseEnv is set' : 'the passphrase does not open it'}`
        : `${field}: ${src.keyFile} is not a PEM private key (${why(e)})`,
    );
  }
  if (!x509.checkPrivateKey(keyObject)) throw new PairError(`${field}: the key ${src.keyFile} is not the key of the certificate ${src.certFile}`);
  const notAfter = Date.parse(x509.validTo);
  const notBefore = Date.parse(x509.validFrom);
  if (!(notAfter > nowMs)) throw new PairError(`${field}: the certificate ${src.certFile} expired on ${new Date(notAfter).toISOString()}`);
  if (notBefore > nowMs) throw new PairError(`${field}: the certificate ${src.certFile} is not valid before ${new Date(notBefore).toISOString()}`);
  return {
    cert,
    key,
    digest: createHash('sha256').update(cert).update('\0').update(key).digest('hex'),
    notAfter: Math.floor(notAfter / 1000),
    fingerprint: x509.fingerprint256,
    subject: x509.subject.replace(/\n/g, ', '),
  };
}

/** uWS's options for a pair, from files in a private directory removed once `use` returns (uWS reads them synchronously). */
export function stage<T>(
  pair: CertPair,
  passphrase: string | null,
  use: (opts: { cert_file_name: string; key_file_name: string; passphrase?: string }) => T,
): T {
  const dir = mkdtempSync(join(tmpdir(), 'txgate-tls-'));
  try {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    writeFileSync(cert, pair.cert, { mode: 0o600 });
    writeFileSync(key, pair.key, { mode: 0o600 });
    return use({ cert_file_name: cert, key_file_name: key, ...(passphrase === null ? {} : { passphrase }) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
