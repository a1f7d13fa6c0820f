/** The Server-Timing header of a request whose stage times were kept (`profiling.serverTiming`). */

/** `host;dur=0.003, size_cap;dur=0.010, …` for the stages that ran (`names`: the pipeline's). */
export function serverTiming(t: Float64Array, names: readonly string[]): string {
  let s = '';
  for (let i = 0; i < t.length; i++) {
    const ms = t[i]!;
    if (ms > 0) s += (s === '' ? '' : ', ') + `${names[i]};dur=${ms.toFixed(3)}`;
  }
  return s;
}
