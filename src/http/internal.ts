/**
 * The internal listener (never public): GET /metrics in the Prometheus text format, aggregated
 * over every worker thread's snapshot, and /health and /ready mirrors for orchestrators.
 */
import type { HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import client from 'prom-client';
import type { Logger } from '../log/log.js';
import type { MetricJSON } from '../metrics/json.js';
import { uws } from '../base/native.js';

export interface InternalDeps {
  readonly log: Logger;
  readonly readiness: () => { ready: boolean; body: string };
  /** Snapshots of every metrics sink in the process (one per worker thread). */
  readonly snapshots: () => Promise<MetricJSON[][]>;
}

/**
 * Process metrics (CPU, memory, event loop lag, GC) of the main thread, prefixed txgate_: started
 * with the internal listener, not where this module is merely imported. Their event-loop-lag
 * histogram samples on a timer of the thread the server may run on: at prom-client's default 10 ms
 * it woke an idle gate a hundred times a second whether or not anything scraped it; 100 ms still
 * gives ten samples a second.
 */
let processRegistry: client.Registry | null = null;
function processMetrics(): client.Registry {
  if (processRegistry === null) {
    processRegistry = new client.Registry();
    client.collectDefaultMetrics({ register: processRegistry, prefix: 'txgate_', eventLoopMonitoringPrecision: 100 });
  }
  return processRegistry;
}

export async function renderMetrics(snapshots: MetricJSON[][]): Promise<string> {
  const own = (await processMetrics().getMetricsAsJSON()) as unknown as MetricJSON[];
  const merged = client.AggregatorRegistry.aggregate([...snapshots, own] as never);
  return merged.metrics();
}

export class InternalServer {
  private readonly app: TemplatedApp;
  private sock: us_listen_socket | null = null;

  constructor(private readonly deps: InternalDeps) {
    const registry = processMetrics();
    const json = (res: HttpResponse, status: string, body: string): void => {
      res.cork(() => {
        res.writeStatus(status).writeHeader('content-type', 'application/json').end(body);
      });
    };
    this.app = uws()
      .App()
      .get('/metrics', (res) => {
        let gone = false;
        res.onAborted(() => (gone = true));
        this.deps
          .snapshots()
          .then(renderMetrics)
          .then(
            (text) => {
              if (!gone)
                res.cork(() => {
                  res.writeStatus('200 OK').writeHeader('content-type', registry.contentType).end(text);
                });
            },
            (e: unknown) => {
              this.deps.log.error({ err: e }, 'metrics scrape failed');
              if (!gone) json(res, '500 Internal Server Error', '{"error":"metrics unavailable"}');
            },
          );
      })
      .get('/health', (res) => json(res, '200 OK', '{"status":"ok"}'))
      .get('/ready', (res) => {
        const r = this.deps.readiness();
        json(res, r.ready ? '200 OK' : '503 Service Unavailable', r.body);
      })
      .any('/*', (res) => json(res, '404 Not Found', '{"error":"not found"}'));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) =>
      this.app.listen(host, port, (s) => {
        if (s === false) return reject(new Error(`cannot listen on ${host}:${port} (internal)`));
        this.sock = s;
        resolve(uws().us_socket_local_port(s as never));
      }),
    );
  }

  close(): void {
    if (this.sock !== null) uws().us_listen_socket_close(this.sock);
    this.sock = null;
    (this.app as unknown as { close(): void }).close();
  }
}
