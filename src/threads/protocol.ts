/**
 * The messages between the main thread and its worker threads, typed both ways.
 */
import type { Config } from '../config/config.js';
import type { HealthBoardBuffers } from '../health/board.js';
import type { ReadinessReport } from '../front/readiness.js';
import type { SharedTableBuffers } from '../limits/shared-tables.js';
import type { MetricJSON } from '../metrics/json.js';
import type { WorkerLogBatch } from '../log/log.js';
import type { TrackSeamPart } from '../track/seam/protocol.js';
import type { FlashblocksSeamPart } from './flashblocks-seam.js';

/** What the threads of one process share: the rate-limit, transaction and connection-count tables, the sequencer health board and the body budget. */
export interface SharedParts {
  readonly rate: SharedTableBuffers;
  readonly tx: SharedTableBuffers;
  readonly conns: SharedTableBuffers;
  readonly health: HealthBoardBuffers;
  /** The budget for request bodies being read (http/body-budget.ts). */
  readonly bodies: SharedArrayBuffer;
}

export interface WorkerData {
  readonly config: Config;
  readonly index: number;
  readonly shared: SharedParts;
  /** With an account store shared across threads (the main thread runs it): what this thread's mirror starts from (accounts/types.ts, SharedAccountStore). */
  readonly accounts: unknown;
  /** Human-readable log lines (`txgate --pretty`) as the main thread's, coloured when its stdout is a terminal. */
  readonly pretty: boolean;
  readonly colorize: boolean;
  /** With a tracked chain: this worker's part of the one tracker per process (track/seam/); its ports are transferred. */
  readonly track: TrackSeamPart | null;
  /** With a chain whose flashblocks stream is read: this worker's part of the one stream per process (flashblocks-seam.ts); its ports are transferred. */
  readonly flashblocks: FlashblocksSeamPart | null;
}

/** Main thread → worker. */
export type ToWorker =
  /** `metrics` false: the readiness alone (asked four times a second; the metrics only for a scrape). */
  | { kind: 'snapshot'; id: number; metrics: boolean }
  | { kind: 'listen' }
  | { kind: 'reload' }
  | { kind: 'tlsReload' }
  | { kind: 'accounts'; update: unknown }
  | { kind: 'drain' };

/** What a worker reports of itself at a snapshot. */
export interface WorkerSnapshot {
  readonly metrics: MetricJSON[];
  readonly readiness: ReadinessReport;
}

/** Worker → main thread. */
export type FromWorker =
  | { kind: 'prepared' }
  | ({ kind: 'snapshot'; id: number } & WorkerSnapshot)
  | { kind: 'listening'; port: number }
  | { kind: 'listenFailed'; why: string }
  | { kind: 'fatal' }
  | WorkerLogBatch;
