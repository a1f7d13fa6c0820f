#!/usr/bin/env -S node --no-memory-reducer
/**
 * `txgate --config <file>`: validates the configuration once (exit 2 listing every problem),
 * refuses to run without the native bindings (exit 1), serves until SIGTERM/SIGINT, then
 * drains gracefully and exits 0; after an uncaught error (in any thread) it drains the same
 * way and exits 1.
 */
import { readCommandLine, UsageError } from './cli-args.js';
import { ConfigError, loadConfigFile, type Config } from './config/config.js';
import { createLogger, flushLogs } from './log/log.js';
import { initCrypto, NativeLoadError, uws } from './base/native.js';
import { BUILD } from './base/build.js';
import { startService } from './service.js';
import { LaneStartError } from './express-lane/control.js';
import { listenFailure } from './http/listen-failure.js';
import { AddressTaken, claimAddress } from './http/address-claim.js';
import { storeStartProblem } from './accounts/open-store.js';
import { tlsStartProblem } from './tls/edge.js';

const USAGE = 'usage: txgate --config <file> [--pretty]   (txgate --help for more)';

const HELP = `txgate ${BUILD.version}: fast-path edge for signed EVM transactions (JSON-RPC 2.0)

usage: txgate --config <file> [--pretty]

  -c, --config FILE   the configuration (JSON; every field but "chains" has a default)
      --pretty        human-readable logs instead of JSON lines
  -v, --version       print the version and exit
  -h, --help          print this help and exit

Serves POST / (eth_chainId, eth_sendRawTransaction; eth_sendRawTransactionSync on chains with
sync on; the WebSocket transport on GET / with websocket on), GET /tip-addresses, GET /health and
GET /ready on listen.host:listen.port, and /metrics on the internal listener.
Signals: SIGTERM or SIGINT drain (requests in flight are answered) and exit 0; SIGHUP re-reads
the accounts file and the TLS certificates (listen.tls). Exit status: 0 after a drain; 1 after an uncaught error, without the native
bindings, when the address is served already (by another txgate or anything else), or without
usable accounts (the file missing or invalid, the database not answering within
accounts.startWaitMs), or with a TLS certificate that does not load, each said in one line on stderr; 2 for bad arguments or an invalid configuration (every problem listed).`;

function parseCliArgs() {
  return readCommandLine({
    config: { type: 'string', short: 'c' },
    pretty: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  });
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parseCliArgs>;
  try {
    args = parseCliArgs();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`txgate: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  if (args.values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  if (args.values.version === true) {
    process.stdout.write(`txgate ${BUILD.version}\n`);
    return 0;
  }
  if (args.values.config === undefined) {
    process.stderr.write(`txgate: --config is required\n${USAGE}\n`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfigFile(args.values.config);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`txgate: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  try {
    uws();
    await initCrypto(config.crypto.secp256k1);
  } catch (e) {
    if (e instanceof NativeLoadError) {
      process.stderr.write(`txgate: ${e.message}\n`);
      return 1;
    }
    throw e;
  }

  // What the operator can fix stops start-up in one line, before any port opens.
  const accountsProblem = await storeStartProblem(config.accounts, args.values.config);
  if (accountsProblem !== null) {
    process.stderr.write(`txgate: ${accountsProblem}\n`);
    return 1;
  }

  const tlsProblem = tlsStartProblem(config.listen.tls);
  if (tlsProblem !== null) {
    process.stderr.write(`txgate: ${tlsProblem}\n`);
    return 1;
  }

  // One txgate per address, however many threads each has (address-claim.ts): checked before
  // anything starts, held until the process ends.
  try {
    await claimAddress(config.listen.host, config.listen.port);
  } catch (e) {
    if (!(e instanceof AddressTaken)) throw e;
    process.stderr.write(`txgate: ${e.message}; change listen.port in ${args.values.config}\n`);
    return 1;
  }

  const pretty = args.values.pretty === true;
  const log = createLogger({ level: config.log.level, pretty });
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService(config, log, { pretty });
  } catch (e) {
    if (e instanceof LaneStartError) {
      log.fatal({ why: e.message }, 'express lane: cannot start');
      await new Promise<void>((r) => flushLogs(log, r));
      process.stderr.write(`txgate: ${e.message}\n`);
      return 1;
    }
    const l = listenFailure(e);
    if (l === null) throw e;
    const field = l.internal ? 'internal.port' : 'listen.port';
    log.fatal({ host: l.host, port: l.port }, 'cannot listen');
    await new Promise<void>((r) => flushLogs(log, r));
    process.stderr.write(
      `txgate: cannot listen on ${l.host}:${l.port}: the port is in use (or the address is not this host's); change ${field} in ${args.values.config}\n`,
    );
    return 1;
  }
  log.info(
    {
      host: config.listen.host,
      port: service.port,
      tls: config.listen.tls.enabled,
      internalPort: service.internalPort,
      workers: config.workers,
      secp256k1: config.crypto.secp256k1,
      signature: config.crypto.signature,
      busyPoll: config.busyPoll,
      chains: service.chains,
    },
    'txgate listening',
  );
  process.on('SIGHUP', () => {
    service.reload();
  });

  return new Promise<number>((resolve) => {
    let stopping = false;
    /** Graceful stop: requests in flight are answered (within shutdown.graceMs), then exit `code`. */
    const stop = (why: string, code: number) => {
      if (stopping) return;
      stopping = true;
      log.info({ why, graceMs: config.shutdown.graceMs }, 'draining');
      if (code !== 0) {
        // After an uncaught error the process may be in no state to finish a drain: bounded.
        process.exitCode = code;
        setTimeout(() => flushLogs(log, () => resolve(code)), config.shutdown.graceMs + 2_000);
      }
      service.stop().then(
        () => {
          log.info('stopped');
          flushLogs(log, () => resolve(code));
        },
        (e: unknown) => {
          log.error({ err: e }, 'stop failed');
          flushLogs(log, () => resolve(1));
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM', 0));
    process.on('SIGINT', () => stop('SIGINT', 0));
    // An uncaught error (a bug) ends the process with status 1 as Node's default would, but
    // logged as JSON and after the requests in flight got their answers; the supervisor
    // restarts it.
    const fatal = (e: unknown) => {
      log.fatal({ err: e }, 'uncaught error: draining, then exiting 1');
      stop('uncaught error', 1);
    };
    process.on('uncaughtException', fatal);
    process.on('unhandledRejection', fatal);
    service.onFailure((why) => stop(why, 1));
  });
}

main().then(
  (code) => {
    process.exit(code);
  },
  (e: unknown) => {
    process.stderr.write(`txgate: fatal: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
