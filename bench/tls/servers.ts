/**
 * bench:tls's servers: the stub sequencer, plain txgate, txgate terminating TLS (both started
 * through bench/common/txgate.ts) and nginx terminating TLS in front of the plain one; natively or
 * every one under valgrind's callgrind, instrumentation off until the measured rounds.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { startStub } from '../servers/stub-sequencer.js';
import { readDump } from '../profile/dump.js';
import { startTxgate, type RunningTxgate } from '../common/txgate.js';
import type { Target } from './client.js';

/** The ports: the stub's, plain txgate's, TLS txgate's and nginx's (each txgate's internal port one up). */
export interface Ports {
  readonly stub: number;
  readonly plain: number;
  readonly tls: number;
  readonly nginx: number;
}

export interface TlsSetup {
  /** The bench's temporary directory (nginx's files, callgrind's dumps). */
  readonly dir: string;
  readonly children: ChildProcess[];
  readonly ports: Ports;
  readonly cert: { readonly certFile: string; readonly keyFile: string };
  readonly accounts: unknown;
}

/** Under callgrind: instrumentation off until the measured rounds. */
const VALGRIND = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--dump-instr=no', '--collect-jumps=no', '--smc-check=all-non-file'];

export interface Servers {
  readonly plain: ChildProcess;
  readonly tls: ChildProcess;
  readonly nginx: ChildProcess;
}

export class TlsServers {
  /** A server exiting while not being stopped ends the bench with its last line. */
  private stopping = false;
  private txgates: RunningTxgate[] = [];

  constructor(private readonly s: TlsSetup) {
    writeFileSync(join(s.dir, 'nginx.conf'), nginxConf(s.dir, s.ports, s.cert));
  }

  startStub(): Promise<ChildProcess> {
    return startStub({ port: this.s.ports.stub, children: this.s.children });
  }

  private watch(name: string, c: ChildProcess, err: () => string): void {
    c.on('exit', (code) => {
      if (!this.stopping) {
        process.stderr.write(`bench:tls: ${name} exited (${code}): ${err().trim().split('\n').at(-1) ?? ''}\n`);
        process.exit(1);
      }
    });
  }

  private callgrind(name: string): string[] {
    return [...VALGRIND, `--callgrind-out-file=${join(this.s.dir, `cg.${name}.%p`)}`];
  }

  private async txgate(name: 'plain' | 'tls', underCallgrind: boolean): Promise<ChildProcess> {
    const { ports, cert, stub } = { ...this.s, stub: this.s.ports.stub };
    const port = ports[name];
    const g = await startTxgate({
      config: {
        listen: { host: '127.0.0.1', port, ...(name === 'tls' ? { tls: { enabled: true, certFile: cert.certFile, keyFile: cert.keyFile } } : {}) },
        internal: { host: '127.0.0.1', port: port + 1 },
        workers: 1,
        log: { level: 'warn' },
        dedup: { acceptedTtlMs: 0 },
        chains: [
          {
            chainId: 4663,
            hosts: ['127.0.0.1', 'localhost'],
            sequencers: [`http://127.0.0.1:${stub}`],
            forward: { connections: 64, timeoutMs: 30_000, queueMs: 30_000 },
            probe: { intervalMs: 600_000, timeoutMs: 60_000 },
          },
        ],
      },
      accounts: this.s.accounts,
      ...(underCallgrind ? { prefix: this.callgrind(name), nodeArgs: ['--single-threaded'] } : {}),
      log: 'ignore',
      ready: 'tcp',
      readyMs: underCallgrind ? 600_000 : 60_000,
      parent: this.s.dir,
      children: this.s.children,
    });
    this.txgates.push(g);
    this.watch(name, g.proc, () => '');
    return g.proc;
  }

  async start(underCallgrind: boolean): Promise<Servers> {
    const nginxCmd = ['nginx', '-c', join(this.s.dir, 'nginx.conf'), '-p', this.s.dir];
    const argv = underCallgrind ? [...this.callgrind('nginx'), ...nginxCmd] : nginxCmd;
    const nginx = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    nginx.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    this.watch('nginx', nginx, () => err);
    this.s.children.push(nginx);
    const [plain, tls] = await Promise.all([this.txgate('plain', underCallgrind), this.txgate('tls', underCallgrind)]);
    await waitFor(this.s.ports.nginx, underCallgrind ? 600 : 60);
    return { plain, tls, nginx };
  }

  async stop(s: Servers): Promise<void> {
    this.stopping = true;
    const gone = new Promise((r) => s.nginx.once('exit', r));
    s.nginx.kill('SIGTERM');
    await Promise.all([gone, ...this.txgates.map((g) => g.stop(600_000))]);
    this.txgates = [];
    this.stopping = false;
  }

  /** From here on, servers exit without ending the bench. */
  finish(): void {
    this.stopping = true;
  }

  targets(s: Servers): Target[] {
    const p = this.s.ports;
    return [
      { name: 'plain', port: p.plain, secure: false, procs: [['txgate', s.plain]] },
      { name: 'txgate', port: p.tls, secure: true, procs: [['txgate', s.tls]] },
      {
        name: 'nginx',
        port: p.nginx,
        secure: true,
        procs: [
          ['nginx', s.nginx],
          ['txgate', s.plain],
        ],
      },
    ];
  }
}

async function waitFor(port: number, seconds: number): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    const ok = await new Promise<boolean>((r) => {
      const s = netConnect(port, '127.0.0.1', () => {
        s.destroy();
        r(true);
      }).once('error', () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port}`);
}

/** CPU seconds (user + system) a process has used. */
export function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

export function control(flag: '-z' | '-d' | '--instr=on', pid: number): void {
  const r = spawnSync('callgrind_control', [flag, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${flag} ${pid}: ${r.stderr}`);
}

/**
 * The instructions of the newest callgrind dump of `pid` (the dumps are removed), less V8's
 * optimizing compiler (Runtime_CompileOptimized, inclusive: with --single-threaded it runs
 * inside whichever round a function got hot in, as the profiler leaves it out too), read with
 * the profiler's reader (bench/profile/dump.ts).
 */
export function dumped(dir: string, pid: number): number {
  const files = readdirSync(dir).filter((f) => f.includes(`.${pid}.`) && f.startsWith('cg.'));
  const newest = files.sort((a, b) => Number(a.split('.').at(-1)) - Number(b.split('.').at(-1))).at(-1);
  if (newest === undefined) throw new Error(`no callgrind dump of ${pid}`);
  const d = readDump(join(dir, newest), { jit: (fn) => fn.startsWith('v8::internal::Runtime_CompileOptimized') });
  for (const f of files) rmSync(join(dir, f));
  return d.total - d.groups.get('jit')!.ir;
}

/** nginx: one worker, TLS 1.2/1.3 without resumption, keep-alive upstream over HTTP/1.1 to the plain txgate. */
function nginxConf(dir: string, p: Ports, tls: { readonly certFile: string; readonly keyFile: string }): string {
  return `daemon off;
master_process off;
worker_processes 1;
error_log ${dir}/nginx-error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/nginx-body;
  proxy_temp_path ${dir}/nginx-proxy;
  fastcgi_temp_path ${dir}/nginx-fastcgi;
  uwsgi_temp_path ${dir}/nginx-uwsgi;
  scgi_temp_path ${dir}/nginx-scgi;
  upstream txgate { server 127.0.0.1:${p.plain}; keepalive 64; keepalive_timeout 5s; }
  server {
    listen 127.0.0.1:${p.nginx} ssl;
    ssl_certificate ${tls.certFile};
    ssl_certificate_key ${tls.keyFile};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache off;
    ssl_session_tickets off;
    keepalive_requests 1000000;
    location / {
      proxy_pass http://txgate;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
    }
  }
}
`;
}
