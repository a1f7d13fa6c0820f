/**
 * A TCP link from txgate's edges to a peer (PostgreSQL) that a test can cut, freeze and restore:
 * the edges are given its port instead of the peer's.
 */
import { createServer, connect, type Server, type Socket, type AddressInfo } from 'node:net';

export class CuttableLink {
  private server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<readonly [Socket, Socket]>();
  private cut = false;
  port = 0;

  constructor(private readonly target: number) {
    this.server = createServer((c) => {
      if (this.cut) return void c.destroy();
      const up = connect(this.target, '127.0.0.1');
      const pair = [c, up] as const;
      this.pairs.add(pair);
      for (const s of pair) {
        this.sockets.add(s);
        s.on('close', () => {
          this.sockets.delete(s);
          this.pairs.delete(pair);
        });
        s.on('error', () => {});
      }
      c.pipe(up).pipe(c);
      up.on('close', () => c.destroy());
      c.on('close', () => up.destroy());
    });
  }

  /**
   * The connections open now stop carrying anything, in either direction, but stay open (a hung
   * server, or a host that died silently behind an address a failover moved); new ones work.
   */
  freeze(): void {
    for (const [c, up] of this.pairs) {
      c.unpipe(up);
      up.unpipe(c);
      c.pause();
      up.pause();
    }
    this.pairs.clear();
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  sever(): void {
    this.cut = true;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.cut = false;
  }

  close(): void {
    this.sever();
    this.server.close();
  }
}
