/**
 * A throwaway PostgreSQL server for the fleet tests and benches: Debian's `postgresql` package, initdb and
 * pg_ctl in a temporary directory on a free port, as the `postgres` user (via runuser: initdb
 * refuses root) when the tests run as root. A missing PostgreSQL fails the tests that need it
 * (CI installs it); it is never a silent skip.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../base/free-port.js';

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) throw new Error('PostgreSQL is not installed (Debian: apt-get install -y postgresql): the fleet tests need a real server');
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0]!, 'bin');
}

export class TestPostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  /** postgres://postgres@127.0.0.1:PORT/DB (trust authentication on loopback, for the tests only). */
  url(db = 'txgate'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${db}`;
  }

  static async start(): Promise<TestPostgres> {
    const bin = binDir();
    const dir = mkdtempSync(join(tmpdir(), 'txgate-pg-'));
    chmodSync(dir, 0o777);
    const data = join(dir, 'data');
    const pg = new TestPostgres(dir, await freePort(), bin);
    pg.run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    pg.startServer();
    pg.run('createdb', ['-h', '127.0.0.1', '-p', String(pg.port), '-U', 'postgres', 'txgate']);
    return pg;
  }

  /** (Re)starts the server on the same port and data. */
  startServer(): void {
    this.run('pg_ctl', [
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'log'),
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
  }

  /** Stops the server at once (connections are cut, as in a crash or a failover). */
  stopServer(): void {
    this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
  }

  /** Runs SQL with psql (as a person editing by hand would), on database `db`. */
  psql(sql: string, db = 'txgate'): string {
    return this.run('psql', ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-d', db, '-v', 'ON_ERROR_STOP=1', '-qtAc', sql]);
  }

  /** Runs a script on psql's standard input, statement by statement, as `psql <<'SQL'` does. */
  psqlScript(script: string, db = 'txgate'): string {
    const [file, ...rest] = this.command('psql', ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-d', db, '-v', 'ON_ERROR_STOP=1', '-qtA']);
    return execFileSync(file!, rest, { encoding: 'utf8', cwd: this.dir, input: script, stdio: ['pipe', 'pipe', 'pipe'] });
  }

  /** Sends a signal to one of the server's processes (a backend's pid, from pg_stat_activity), as the server's user. */
  signal(pid: number, sig: 'STOP' | 'CONT'): void {
    const args = ['-s', sig, String(pid)];
    if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', 'kill', ...args]);
    else execFileSync('kill', args);
  }

  /** Runs a script with psql in the background (a session holding a lock, say); resolves with its exit code. */
  psqlBackground(script: string, db = 'txgate'): { done: Promise<number>; kill(): void } {
    const [file, ...rest] = this.command('psql', ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-d', db, '-v', 'ON_ERROR_STOP=1', '-qtA']);
    const child = spawn(file!, rest, { cwd: this.dir, stdio: ['pipe', 'ignore', 'ignore'] });
    child.stdin!.end(script);
    return { done: new Promise((r) => child.on('close', (code) => r(code ?? 1))), kill: () => child.kill() };
  }

  async destroy(): Promise<void> {
    const [file, ...args] = this.command('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'immediate', 'stop']);
    spawnSync(file!, args, { stdio: 'ignore' }); // already stopped is fine
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A PostgreSQL tool's command line, as the `postgres` user when the tests run as root. */
  private command(tool: string, args: string[]): string[] {
    const cmd = join(this.bin, tool);
    return [...(process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', cmd] : [cmd]), ...args];
  }

  private run(tool: string, args: string[]): string {
    const [file, ...rest] = this.command(tool, args);
    return execFileSync(file!, rest, { encoding: 'utf8', cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  }
}
