/**
 * The composition root: builds the per-chain runtime, the stages in their order, the front end
 * and the readiness checks from a validated configuration.
 */
import type { Config } from './config.js';
import { result, REJECT } from './errors.js';
import { PublicServer, type RequestObserver } from './http/server.js';
import { Readiness } from './http/readiness.js';
import type { Logger } from './log.js';
import type { BaseCtx, ChainRuntime, RoutedCtx } from './pipeline/context.js';
import { PipelineBuilder, type PipelineHooks } from './pipeline/pipeline.js';
import { createHostStage, HostTable } from './stages/host.js';
import { createParseStage } from './stages/parse.js';
import { createRouteStage } from './stages/route.js';
import { createSizeCapStage } from './stages/size-cap.js';

export function buildChains(config: Config): ChainRuntime[] {
  return config.chains.map((c) => {
    const chainIdHex = '0x' + c.chainId.toString(16);
    return { chainId: c.chainId, chainIdHex, chainIdBig: BigInt(c.chainId), chainIdAnswer: result(chainIdHex), config: c };
  });
}

export interface AppOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly observer?: RequestObserver;
  readonly idPrefix?: string;
}

export interface App {
  readonly server: PublicServer;
  readonly readiness: Readiness;
  readonly chains: readonly ChainRuntime[];
  /** Starts listening; resolves with the bound port. */
  start(): Promise<number>;
  /** Graceful stop within the configured grace period. */
  stop(): Promise<void>;
}

export function createApp(opts: AppOptions): App {
  const { config, log } = opts;
  const chains = buildChains(config);
  const hosts = new HostTable(chains);
  const readiness = new Readiness();

  const buildPipeline = (hooks: PipelineHooks) =>
    PipelineBuilder.start<BaseCtx>()
      .then(createHostStage(hosts))
      .then(createSizeCapStage(config.limits))
      .then(createParseStage())
      .then(createRouteStage(config.limits))
      .end({ name: 'auth', run: (_ctx: RoutedCtx) => REJECT.not_implemented }, hooks);

  const server = new PublicServer({
    log,
    readiness,
    buildPipeline,
    tipAddresses: null,
    serverTiming: config.profiling.serverTiming,
    ...(opts.observer !== undefined ? { observer: opts.observer } : {}),
    ...(opts.idPrefix !== undefined ? { idPrefix: opts.idPrefix } : {}),
  });

  return {
    server,
    readiness,
    chains,
    start: () => server.listen(config.listen.host, config.listen.port),
    async stop() {
      await server.drain(config.shutdown.graceMs);
    },
  };
}
