/**
 * TLS on the public port (docs/operations.md#tls): a uWS SSLApp (BoringSSL, in the serving
 * thread), its certificates chosen by SNI, rotated without a restart.
 *
 * How uWS serves certificates, and what follows from it:
 * - The SSLApp's own context (the certificate it is built with) cannot be replaced. It serves
 *   only the clients that send no server name (a client connecting by IP address).
 * - Every server name added (`addServerName`) gets a context of its own, and a router of its
 *   own: a name without routes answers nothing. So every route is registered on every name
 *   (`register(app.domain(name))`), the same front ends, the same handlers.
 * - A name is rotated by removing it and adding it again with the new certificate: new
 *   handshakes get the new one; open connections keep the certificate they shook hands with
 *   and are served by the new name's routes (the same handlers).
 * - The default certificate is served to every other server name through wildcard names, one
 *   per depth (`*`, `*.*`, … up to WILDCARD_DEPTH labels); a host's own name wins over them.
 *   So the default rotates too, except for clients that send no server name: they get the
 *   certificate the process started with until it restarts (its expiry is its own series).
 */
import { isMainThread, workerData } from 'node:worker_threads';
import type { TemplatedApp } from 'uWebSockets.js';
import type { Logger } from '../log.js';
import { uws } from '../native.js';
import type { TlsConfig } from './config.js';
import { type CertPair, digestOf, loadPair, PairError, type PairSource, stage } from './pair.js';
import { FileWatch } from './watch.js';

/** Every worker thread rotates its own app, but the operator reads one line: the first thread (or the main thread) speaks. */
const SPEAKS = isMainThread || (workerData as { index?: unknown } | null)?.index === 0;

/** Server names of up to this many labels get the default certificate by SNI. */
export const WILDCARD_DEPTH = 8;
/** The `host` label of the default certificate served by SNI, and of the one served without a server name. */
export const DEFAULT_HOST = '*';
export const NO_SERVER_NAME = '(none)';

export type TlsReloadResult = 'rotated' | 'unchanged' | 'invalid';

export interface TlsObserver {
  /** A certificate now in force for `host` (a server name, DEFAULT_HOST or NO_SERVER_NAME), expiring at `notAfter` (Unix seconds). */
  certificate(host: string, notAfter: number): void;
  /** A reload's outcome, per certificate source looked at. */
  reload(result: TlsReloadResult): void;
}

/** One certificate source and the server names it is served to. */
interface Served {
  readonly src: PairSource;
  /** The server names (patterns) it is added under. */
  readonly names: readonly string[];
  /** The `host` label(s) of its expiry series. */
  readonly label: string;
  pair: CertPair;
  /** The bytes last refused: the same bytes seen again (watch, then poll) are not refused twice. */
  refused: string;
}

/** The wildcard names covering every server name of 1 to WILDCARD_DEPTH labels. */
export function wildcardNames(): string[] {
  return Array.from({ length: WILDCARD_DEPTH }, (_, i) => Array.from({ length: i + 1 }, () => '*').join('.'));
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
    this.watch = new FileWatch(this.files(), (trigger) => void this.reload(trigger), this.log, pollMs === undefined ? {} : { pollMs });
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
   * The SSLApp with every certificate in force, `register` called on its own routes and on every
   * server name's. Throws a PairError (one line) when a certificate does not load.
   */
  open(register: (app: TemplatedApp) => void): TemplatedApp {
    const { def, hosts } = pairSources(this.cfg);
    const first = loadPair(def);
    let app: TemplatedApp;
    try {
      app = stage(first, def.passphrase, (opts) => uws().SSLApp(opts));
    } catch (e) {
      throw new PairError(`listen.tls: uWS refused the certificate ${def.certFile} (${(e as Error).message})`);
    }
    this.app = app;
    this.register = register;
    register(app);
    this.observer?.certificate(NO_SERVER_NAME, first.notAfter);
    this.served = [
      { src: def, names: wildcardNames(), label: DEFAULT_HOST, pair: first, refused: '' },
      ...hosts.map((h) => ({ src: h.src, names: h.names, label: h.names.join(','), pair: loadPair(h.src), refused: '' })),
    ];
    for (const s of this.served) this.add(s);
    return app;
  }

  /** Adds every name of `s` with its pair, each with the routes. */
  private add(s: Served): void {
    const app = this.app!;
    stage(s.pair, s.src.passphrase, (opts) => {
      for (const name of s.names) {
        app.addServerName(name, opts);
        this.register!(app.domain(name));
      }
    });
    for (const name of s.label === DEFAULT_HOST ? [DEFAULT_HOST] : s.names) this.observer?.certificate(name, s.pair.notAfter);
  }

  /**
   * Reads every certificate again: a changed one that loads replaces the one in force (new
   * handshakes get it, open connections keep theirs); one that does not is refused with one log
   * line, the one in force staying. `forced` (SIGHUP) logs what it found even when unchanged.
   */
  reload(trigger: string): TlsReloadResult[] {
    if (this.app === null) return [];
    const forced = trigger === 'SIGHUP';
    return this.served.map((s) => {
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
      const old = s.pair;
      for (const name of s.names) this.app!.removeServerName(name);
      s.pair = pair;
      s.refused = '';
      this.add(s);
      this.observer?.reload('rotated');
      const fields = {
        trigger,
        names: s.label,
        fingerprint: pair.fingerprint,
        expires: new Date(pair.notAfter * 1000).toISOString(),
        previous: old.fingerprint,
      };
      if (this.speaks) this.log.info(fields, `${s.src.field}: certificate rotated (new handshakes get it; open connections keep theirs)`);
      else this.log.debug(fields, 'certificate rotated');
      return 'rotated';
    });
  }

  private tell(result: TlsReloadResult, s: Served, trigger: string, forced: boolean): TlsReloadResult {
    this.observer?.reload(result);
    if (forced && this.speaks) this.log.info({ trigger, names: s.label, fingerprint: s.pair.fingerprint }, `${s.src.field}: certificate unchanged`);
    return result;
  }
}
