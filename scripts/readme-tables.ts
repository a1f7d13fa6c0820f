/**
 * The generated tables of the README and docs/, rendered from the code: the stages in their order
 * (from the stage list, each stage's `about`, `adds` and declared reasons), the reasons table
 * (from src/base/reasons.ts), the retry tables (readme-retry.ts), the Performance figures
 * (readme-perf.ts, from bench/results), the configuration fields (src/config/config.ts) and the metric
 * families (src/metrics/catalog.ts), the import layers and graph (imports.ts). `npm run readme` writes each between its markers in
 * whichever page carries them; tests fail when a page differs from the rendering, so no such
 * table is edited by hand.
 */
import { statesTable, transitionsTable } from '../src/track/states.js';
import { renderFieldTable } from '../src/base/config-fields.js';
import { renderMetricsTable } from '../src/metrics/catalog.js';
import { HostTable } from '../src/config/chains.js';
import { BENCH_LAYERS, CLIENT_LAYERS, renderImportGraph, renderLayers, SUPPORT_LAYERS } from './imports.js';
import { parseConfig } from '../src/config/config.js';
import { CONFIG } from '../src/config/config-schema.js';
import { RateLimiter } from '../src/limits/rate-limiter.js';
import type { RunnerStage } from '../src/pipeline/pipeline.js';
import { REASON_NAMES, REASONS, RETRY, type Reason, type ReasonSpec } from '../src/base/reasons.js';
import { createForwardStage } from '../src/stages/forward.js';
import { renderClientErrors } from './client-errors-table.js';
import { renderExamples } from './readme-examples.js';
import { renderMicro, renderPerf } from './readme-perf.js';
import { renderExpressLaneCost } from './express-lane-cost.js';
import { renderLimit } from './limit-table.js';
import { readRun } from '../bench/common/results-schema.js';
import { silenceTable } from '../bench/common/silence-table.js';
import { renderTrackCost } from './track-cost.js';
import { renderKitOutcomes, renderRetry } from './readme-retry.js';
import { admissionStages } from '../src/stages/list.js';
import { renderSkips } from './doc-blocks.js';

/** The pipeline's stages in their order, built from the stage list over inert parts (nothing runs). */
export function pipelineStages(): readonly RunnerStage[] {
  const config = parseConfig({ chains: [{ chainId: 1, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }], workers: 1 }, '/', {});
  const store = { ready: false, stale: false, size: 0, byKeyHash: () => undefined, start: async () => {}, close: () => {} };
  const admission = admissionStages({ config, hosts: new HostTable([]), store, decoders: new Map(), limiter: new RateLimiter() });
  return [...admission.stages, createForwardStage(new Map())];
}

/** A stage's name as a person reads it ('rate_limit' -> 'rate limit'; 'front_end' -> 'front end'). */
export const label = (where: string): string => where.replaceAll('_', ' ');

const code = (s: string) => `\`${s}\``;

export function renderReasons(): string {
  const rows = REASON_NAMES.map((r) => {
    const spec: ReasonSpec = REASONS[r];
    const where = spec.stages.map(label).join(' / ') + (spec.when === undefined ? '' : ` (${spec.when})`);
    return `| ${code(r)} | ${spec.status} | ${spec.code} | ${where} | ${code(RETRY[spec.retry].outcome)} | ${spec.action} |`;
  });
  return ['| reason | HTTP | JSON-RPC code | where | outcome (the retry table) | what it means, what to check |', '|---|---|---|---|---|---|', ...rows].join(
    '\n',
  );
}

/** "402 `fee_rejected`; 403 `a`, `b`": a stage's refusals grouped by HTTP status. */
function refusals(reasons: readonly string[]): string {
  const byStatus = new Map<number, string[]>();
  for (const r of reasons) {
    if (r === 'ok') continue;
    const status = REASONS[r as Reason].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code(r)]);
  }
  return [...byStatus]
    .sort(([a], [b]) => a - b)
    .map(([status, names]) => `${status} ${names.join(', ')}`)
    .join('; ');
}

export function renderStages(stages: readonly RunnerStage[] = pipelineStages()): string {
  const rows = stages.map((s) => {
    const fields = typeof s.adds === 'string' ? [s.adds] : (s.adds ?? []);
    const adds = fields.length > 0 ? fields.map(code).join(', ') : s.reasons.includes('ok') ? '(answers)' : '(checks only)';
    const answers = s.reasons.includes('ok') && fields.length > 0 ? ' (or answers)' : '';
    return `| ${label(s.name)} | ${adds}${answers} | ${s.about ?? ''} | ${refusals(s.reasons) || '(none)'} |`;
  });
  return ['| stage | adds | what it checks | refuses with |', '|---|---|---|---|', ...rows].join('\n');
}

/** The generated blocks a page may carry, by marker name, each with its renderer. */
export const BLOCKS: Readonly<Record<string, () => string>> = {
  stages: () => renderStages(),
  reasons: renderReasons,
  retry: renderRetry,
  'kit-outcomes': renderKitOutcomes,
  'client-errors': renderClientErrors,
  perf: () => renderPerf(),
  'perf-doc': () => renderPerf(undefined, '../'),
  'perf-micro': renderMicro,
  'express-lane-cost': () => renderExpressLaneCost(),
  'perf-limit': () => renderLimit(),
  'perf-silence': () => silenceTable(readRun('silence', 'silence')),
  'track-cost': () => renderTrackCost(),
  config: () => renderFieldTable(CONFIG),
  metrics: renderMetricsTable,
  layers: () => renderLayers(),
  'client-layers': () => renderLayers(CLIENT_LAYERS),
  'bench-layers': () => renderLayers(BENCH_LAYERS),
  'support-layers': () => renderLayers(SUPPORT_LAYERS),
  imports: () => renderImportGraph(),
  'track-states': statesTable,
  'track-transitions': transitionsTable,
  skips: () => renderSkips(),
};

/**
 * A page (the README or a page of docs/) with every generated block it carries rendered between
 * its markers, and the examples/ files in their blocks. A page without a block's markers is left
 * as it is there; a page with one marker of a pair and not the other is an error.
 */
export function renderPage(text: string): string {
  let out = text;
  for (const [name, render] of Object.entries(BLOCKS)) {
    if (!out.includes(`<!-- ${name}:start -->`) && !out.includes(`<!-- ${name}:end -->`)) continue;
    out = replaceBlock(out, name, render());
  }
  return renderExamples(out);
}

/** The text between `<!-- name:start -->` and `<!-- name:end -->`. */
export function block(readme: string, name: string): string {
  const start = readme.indexOf(`<!-- ${name}:start -->`);
  const end = readme.indexOf(`<!-- ${name}:end -->`);
  if (start < 0 || end < start) throw new Error(`no <!-- ${name}:start --> … <!-- ${name}:end --> block, in that order`);
  return readme.slice(readme.indexOf('\n', start) + 1, end).trimEnd();
}

function replaceBlock(readme: string, name: string, body: string): string {
  block(readme, name); // both markers are there, in order
  const from = readme.indexOf('\n', readme.indexOf(`<!-- ${name}:start -->`)) + 1;
  return readme.slice(0, from) + body + '\n' + readme.slice(readme.indexOf(`<!-- ${name}:end -->`));
}
