/**
 * A run of two pipelines through the stage probes, for test/e2e/profile-attribution.test.ts: run
 * under callgrind with TXGATE_STAGE_PROBES set, as the profiler runs txgate. Pipeline A is
 * lead → heavy → tail → end, pipeline B its twin lead_b → light → tail_b → end_b; `heavy` spins a
 * loop of K steps that `light` does not, everything else alike. The loop alone is also called
 * through the probe slot `LOOP_SLOT` K steps at a time: its own cost, measured the profiler's way.
 *   node dist/test/support/probed-pipeline.js REQUESTS K
 */
import { result } from '../../src/base/errors.js';
import { RequestContext, type BaseCtx } from '../../src/pipeline/context.js';
import { PipelineBuilder, type Stage } from '../../src/pipeline/pipeline.js';
import { createRequire } from 'node:module';

/** The slot the loop alone is called through (one the pipelines' names never reach). */
export const LOOP_SLOT = 50;

let sink = 0;
/** The known cost: K steps of integer arithmetic the compiler cannot drop (the result is kept). */
function spin(k: number): number {
  let x = sink;
  for (let i = 0; i < k; i++) x = (Math.imul(x, 31) + i) | 0;
  return x;
}
/** A little work every stage does alike. */
const touch = <C extends BaseCtx>(ctx: C): C => {
  sink ^= ctx.reqId.length;
  return ctx;
};

const stage = <N extends string>(name: N, k: number): Stage<BaseCtx, object, N> => ({
  name,
  adds: null,
  reasons: [],
  run: (ctx) => {
    if (k > 0) sink ^= spin(k);
    return touch(ctx);
  },
});

if (process.argv[1]?.endsWith('probed-pipeline.js')) {
  const requests = Number(process.argv[2] ?? 10_000);
  const k = Number(process.argv[3] ?? 2_000);
  const hooks = { exit: () => void (sink ^= 1) };
  const end = (name: string) => ({ name, reasons: ['ok' as const], run: () => result('0x') });
  const a = PipelineBuilder.start<BaseCtx>().add(stage('lead', 0)).add(stage('heavy', k)).add(stage('tail', 0)).end(end('end'), hooks);
  const b = PipelineBuilder.start<BaseCtx>().add(stage('lead_b', 0)).add(stage('light', 0)).add(stage('tail_b', 0)).end(end('end_b'), hooks);
  const probes = createRequire(import.meta.url)(process.env.TXGATE_STAGE_PROBES!) as { slots: ((f: (x: unknown) => unknown, a: unknown) => unknown)[] };
  const loop = probes.slots[LOOP_SLOT]!;
  const source = { read: () => Promise.resolve({ text: '', bytes: 0 }) };
  const head = { host: 'localhost', json: true, declaredBytes: -1, apiKey: '' };
  for (let i = 0; i < requests; i++) {
    a.run(new RequestContext('a', 0, head, source, a.initFields));
    b.run(new RequestContext('b', 0, head, source, b.initFields));
    sink ^= loop(spin as (x: unknown) => unknown, k) as number;
  }
  process.stdout.write(`done ${sink & 1}\n`);
}
