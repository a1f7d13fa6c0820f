/**
 * The whole service in one process: the app (public listener, stages, forwarders) and the
 * internal listener (metrics, health and readiness mirrors).
 */
import { createApp, type App } from './app.js';
import type { Config } from './config.js';
import { InternalServer } from './http/internal.js';
import type { Logger } from './log.js';

export interface Service {
  readonly app: App;
  readonly port: number;
  readonly internalPort: number | null;
  stop(): Promise<void>;
}

export async function startService(config: Config, log: Logger): Promise<Service> {
  const app = createApp({ config, log });
  const port = await app.start();
  let internal: InternalServer | null = null;
  let internalPort: number | null = null;
  if (config.internal.enabled) {
    internal = new InternalServer({
      log,
      readiness: () => app.readiness.report(),
      snapshots: async () => (app.metrics !== null ? [app.metrics.snapshot()] : []),
    });
    internalPort = await internal.listen(config.internal.host, config.internal.port);
  }
  return {
    app,
    port,
    internalPort,
    async stop() {
      await app.stop();
      internal?.close();
    },
  };
}
