/**
 * TLS on the public port (docs/operations.md#tls): a uWS SSLApp (BoringSSL, in the serving
 * thread), its certificates chosen by SNI, rotated without a restart.
 *
 * How uWS serves certificates, and what follows from it:
 * - The SSLApp's own context (the default certificate) cannot be replaced, and every server
 *   name added (`addServerName`) gets a router of its own, which `removeServerName` deletes
 *   while the connections that shook hands under that name still route through it. So a name
 *   is never removed, and every route is registered on every name (`register(app.domain(name))`).
 * - A rotation builds a new app with the certificates in force, the same front ends registered
 *   on it, and hands it to the port (`swap`): the new app listens on the same address (the
 *   port is bound with SO_REUSEPORT), then the old app's listen socket closes. New handshakes
 *   get the new certificates; open connections stay on the old app, with the certificate they
 *   shook hands with, served by the same handlers, until they close (drain closes every app).
 */
import { isMainThread, workerData } from 'node:worker_threads';
import type { TemplatedApp } from 'uWebSockets.js';
import type { Logger } from '../log/log.js';
import { uws } from '../base/native.js';
import type { TlsConfig } from './config.js';
import { type CertPair, digestOf, loadPair, PairError, type PairSource, stage } from './pair.js';
import { FileWatch } from '../base/file-watch.js';

/** Every worker thread rotates its own app, but the operator reads one line: the first thread (or the main thread) speaks. */
const SPEAKS = isMainThread || (workerData as { index?: unknown } | null)?.index === 0;

/** The `host` label of the default certificate's expiry series. */
export const DEFAULT_HOST = '*';

export type TlsReloadResult = 'rotated' | 'unchanged' | 'invalid';

export interface TlsObserver {
  /** A certificate now in force for `host` (server names, or DEFAULT_HOST), expiring at `notAfter` (Unix seconds). */
  certificate(host: string, notAfter: number): void;
  /** A reload's outcome, per certificate source looked at. */
  reload(result: TlsReloadResult): void;
}

/** One certificate source and the server names it is served to (none: the default). */
interface Served {
  readonly src: PairSource;
  readonly names: readonly string[];
  /** The `host` label(s) of its expiry series. */
  readonly label: string;
  pair: CertPair;
  /** The bytes last refused: the same bytes seen again (watch, then poll) are not refused twice. */
  refused: string;
}

/** The certificate sources of a configuration (passphrases read from the environment). */
export function pairSources(cfg: TlsConfig, env: NodeJS.ProcessEnv = process.env): { def: PairSource; hosts: { src: PairSource; names: readonly string[] }[] } {
  const pass = (name: string | null) => (name === null ? null : (env[name] ?? null));
  return {
    def: { field: 'listen.tls', certFile: cfg.certFile ?? '', keyFile: cfg.keyFile ?? '', passphrase: pass(cfg.passphraseEnv) },
    hosts: cfg.hosts.map((h, i) => ({
      src: { field: `listen.tls.hosts[${i}]`, certFile: h.certFile ?? '', keyFile: h.keyFile ?? '', passphrase: pass(h.passphraseEnv) },
      names: h.names,
    })),
  };
}

/** What stops start-up: the first certificate that does not load, in one line (null when all do). */
export function tlsStartProblem(cfg: TlsConfig, env: NodeJS.ProcessEnv = process.env): string | null {
  if (!cfg.enabled) return null;
  const { def, hosts } = pairSources(cfg, env);
  try {
    for (const s of [def, ...hosts.map((h) => h.src)]) loadPair(s);
    return null;
  } catch (e) {
    if (e instanceof PairError) return e.message;
    throw e;
  }
}

export class TlsEdge {
  private app: TemplatedApp | null = null;
  private register: ((app: TemplatedApp) => void) | null = null;
  private swap: ((app: TemplatedApp) => boolean) | null = null;
  private served: Served[] = [];
  private watch: FileWatch | null = null;

  constructor(
    private readonly cfg: TlsConfig,
    private readonly log: Logger,
    private readonly observer?: TlsObserver,
    /** Whether this thread logs rotations and refusals at info/error (one thread speaks for the process). */
    private readonly speaks = SPEAKS,
  ) {}

  /** Rotation on file change (after open): the files' directories watched, a stat poll behind. */
  async watchFiles(pollMs?: number): Promise<void> {
    if (this.app === null || this.watch !== null) return;
    this.watch = new FileWatch(this.files(), (trigger) => void this.reload(trigger), this.log, { what: 'certificate', pollMs });
    await this.watch.start();
  }

  close(): void {
    this.watch?.close();
    this.watch = null;
  }

  /** Every file a certificate is read from (to watch). */
  files(): string[] {
    return this.served.flatMap((s) => [s.src.certFile, s.src.keyFile]);
  }

  /**
   * The SSLApp with every certificate, `register` called on its own routes and on every server
   * name's. Throws a PairError (one line) when a certificate does not load. `swap` puts a
   * rotation's new app in place of the one listening (false: not done, e.g. draining).
   */
  open(register: (app: TemplatedApp) => void, swap: (app: TemplatedApp) => boolean): TemplatedApp {
    const { def, hosts } = pairSources(this.cfg);
    this.served = [
      { src: def, names: [], label: DEFAULT_HOST, pair: loadPair(def), refused: '' },
      ...hosts.map((h) => ({ src: h.src, names: h.names, label: h.names.join(','), pair: loadPair(h.src), refused: '' })),
    ];
    this.register = register;
    this.swap = swap;
    return this.build();
  }

  /** An app serving the pairs in force. */
  private build(): TemplatedApp {
    const [def, ...hosts] = this.served;
    let app: TemplatedApp;
    try {
      app = stage(def!.pair, def!.src.passphrase, (opts) => uws().SSLApp(opts));
    } catch (e) {
      throw new PairError(`listen.tls: uWS refused the certificate ${def!.src.certFile} (${(e as Error).message})`);
    }
    this.register!(app);
    for (const s of hosts)
      stage(s.pair, s.src.passphrase, (opts) => {
        for (const name of s.names) {
          app.addServerName(name, opts);
          this.register!(app.domain(name));
        }
      });
    for (const s of this.served) this.observer?.certificate(s.label, s.pair.notAfter);
    this.app = app;
    return app;
  }

  /**
   * Reads every certificate again: a changed one that loads replaces the one in force (new
   * handshakes get it, open connections keep theirs); one that does not is refused with one log
   * line, the one in force staying. `forced` (SIGHUP) logs what it found even when unchanged.
   */
  reload(trigger: string): TlsReloadResult[] {
    if (this.app === null) return [];
    const forced = trigger === 'SIGHUP';
    const before = this.served.map((s) => s.pair);
    /** Said once the new app is in place. */
    const said: (() => void)[] = [];
    const results = this.served.map((s): TlsReloadResult => {
      const digest = digestOf(s.src);
      if (digest === s.pair.digest || (digest !== null && digest === s.refused && !forced)) return this.tell('unchanged', s, trigger, forced);
      let pair: CertPair;
      try {
        pair = loadPair(s.src);
      } catch (e) {
        if (!(e instanceof PairError)) throw e;
        s.refused = digest ?? '';
        this.observer?.reload('invalid');
        const line = `${e.message}; the certificate in force stays (${trigger})`;
        if (this.speaks) this.log.error({ trigger, expires: new Date(s.pair.notAfter * 1000).toISOString() }, line);
        else this.log.debug({ trigger }, line);
        return 'invalid';
      }
      const fields = {
        trigger,
        names: s.label,
        fingerprint: pair.fingerprint,
        expires: new Date(pair.notAfter * 1000).toISOString(),
        previous: s.pair.fingerprint,
      };
      s.pair = pair;
      s.refused = '';
      said.push(() => {
        this.observer?.reload('rotated');
        if (this.speaks) this.log.info(fields, `${s.src.field}: certificate rotated (new handshakes get it; open connections keep theirs)`);
        else this.log.debug(fields, 'certificate rotated');
      });
      return 'rotated';
    });
    if (!results.includes('rotated')) return results;
    if (this.rotate(trigger)) {
      for (const say of said) say();
      return results;
    }
    this.served.forEach((s, i) => {
      s.pair = before[i]!;
      this.observer?.certificate(s.label, s.pair.notAfter);
    });
    return results.map((r) => (r === 'rotated' ? 'invalid' : r));
  }

  /**
   * A new app with the pairs in force, in place of the one listening. The old app stays (a few
   * contexts and routers, until the process ends) serving its open connections: uWS tells no one
   * when its last connection closes.
   */
  private rotate(trigger: string): boolean {
    const old = this.app;
    let next: TemplatedApp;
    try {
      next = this.build();
    } catch (e) {
      this.app = old;
      this.log.error({ err: e, trigger }, 'TLS rotation failed: the certificates in force stay');
      return false;
    }
    if (!this.swap!(next)) {
      this.app = old;
      this.log.error(
        { trigger },
        'TLS rotation not applied (the new app could not listen beside the old one, or the port is draining): the certificates the port started with stay',
      );
      (next as unknown as { close(): void }).close();
      return false;
    }
    return true;
  }

  private tell(result: TlsReloadResult, s: Served, trigger: string, forced: boolean): TlsReloadResult {
    this.observer?.reload(result);
    if (forced && this.speaks) this.log.info({ trigger, names: s.label, fingerprint: s.pair.fingerprint }, `${s.src.field}: certificate unchanged`);
    return result;
  }
}
