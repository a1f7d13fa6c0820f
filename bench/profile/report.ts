/**
 * The profiler's report: the console table, the Markdown, the picture (both builds' stages side
 * by side per scenario) and one self-contained HTML page holding the tables and the picture. One
 * unit per kind of figure: instructions per request in thousands (k), bytes per request in KiB.
 * Nothing is measured here.
 */
import { escapeXml, stackedBarsSvg, type Bar } from '../common/svg.js';
import type { Compared, Figure, ProfileRun } from '../common/results-schema.js';

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
const kib = (n: number) => `${(n / 1024).toFixed(2)} KiB`;
const signed = (n: number, f: (n: number) => string) => `${n >= 0 ? '+' : '−'}${f(Math.abs(n))}`;
const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}%`;
const mark = (f: Figure) => (f.verdict === 'dearer' ? 'DEARER' : f.verdict === 'cheaper' ? 'cheaper' : 'same');

/** The two builds' names as the tables head them. */
export function buildNames(p: ProfileRun): { base: string; candidate: string } {
  return {
    base: p.base.commit === '.' ? 'this tree (as base)' : `base ${p.base.ref} ${p.base.commit.slice(0, 10)}`,
    candidate: `this tree ${p.candidate.commit.slice(0, 10)}${p.candidate.dirty ? '+changes' : ''}`,
  };
}

/** Rows of one scenario: [part, base, candidate, difference, verdict, how]. */
function rows(c: Compared): string[][] {
  const out = c.parts.map((p) => [p.part, k(p.base), k(p.candidate), signed(p.delta, k), mark(p), p.why]);
  out.push([
    '**total**',
    k(c.total.base),
    k(c.total.candidate),
    `${signed(c.total.delta, k)} (${pct(c.total.ratio - 1)})`,
    c.failed.includes('total') ? 'FAIL' : mark(c.total),
    c.total.tolerance !== null
      ? `the median of the paired ratios ${pct(c.total.ratio - 1)} against the guard's tolerance +${(c.total.tolerance * 100).toFixed(1)}%; ${c.total.why}`
      : c.total.why,
  ]);
  out.push([
    'parts added up',
    k(c.sum.base),
    k(c.sum.candidate),
    '',
    '',
    `the medians of the parts, against the total's: ${pct(c.sum.base / c.total.base - 1)} base, ${pct(c.sum.candidate / c.total.candidate - 1)} this tree`,
  ]);
  out.push([
    'collection (left out)',
    k(c.gc.base),
    k(c.gc.candidate),
    '',
    '',
    'the collector per request in the counted rounds (a round with a collection is counted again)',
  ]);
  if (c.bytes !== undefined)
    out.push([
      'bytes allocated',
      kib(c.bytes.base),
      kib(c.bytes.candidate),
      pct(c.bytes.ratio - 1),
      c.bytes.pass ? 'same' : 'FAIL',
      c.bytes.tolerance !== null
        ? `against the guard's tolerance +${(c.bytes.tolerance * 100).toFixed(1)}%`
        : 'each build started plain, whole young generations counted',
    ]);
  return out;
}

export function consoleTable(p: ProfileRun): string {
  const names = buildNames(p);
  let s = `\n${names.base}  against  ${names.candidate}: instructions per request (k), medians of ${p.rounds} rounds of ${p.requests}\n`;
  for (const c of p.compared) {
    s += `\n${c.scenario}${c.failed.length > 0 ? `  FAIL: ${c.failed.join(', ')}` : ''}\n`;
    for (const r of rows(c))
      s += `  ${r[0]!.replace(/\*/g, '').padEnd(22)} ${r[1]!.padStart(10)} ${r[2]!.padStart(10)} ${r[3]!.padStart(15)}  ${r[4]!.padEnd(7)} ${r[5]}\n`;
  }
  return s;
}

export function profileMarkdown(p: ProfileRun, label = 'profile'): string {
  const names = buildNames(p);
  const lines = [
    `# bench:profile`,
    '',
    `${names.base} against ${names.candidate}, ${p.date.slice(0, 10)}, node ${p.node}: instructions per request (k) under callgrind, medians of ${p.rounds} rounds of ${p.requests} requests after ${p.warmup} warm-up rounds, both builds counted side by side; each stage on the request's own path (docs/performance.md, "The profiler").`,
  ];
  for (const c of p.compared) {
    lines.push('', `## ${c.scenario}${c.failed.length > 0 ? ` — FAIL: ${c.failed.join(', ')}` : ''}`, '');
    lines.push(`| part | ${names.base} | ${names.candidate} | difference | verdict | how |`, '|---|--:|--:|--:|---|---|');
    for (const r of rows(c)) lines.push(`| ${r.map((x) => x.replace(/\|/g, '\\|')).join(' | ')} |`);
  }
  lines.push('', `![both builds' parts per scenario](${label}.svg)`);
  return lines.join('\n') + '\n';
}

export function profileSvg(p: ProfileRun): string {
  const names = buildNames(p);
  const bars: Bar[] = p.compared.flatMap((c) =>
    (['base', 'candidate'] as const).map((b) => ({
      label: `${c.scenario} — ${b === 'base' ? 'base' : 'this tree'}`,
      segments: c.parts.map((x) => ({ label: x.part, value: Math.max(0, x[b]) })),
      note: k(c.total[b]),
    })),
  );
  return stackedBarsSvg({ title: `Instructions per request by part: ${names.base} (base) against ${names.candidate}`, unit: 'instructions per request', bars });
}

/** One page, nothing loaded from elsewhere: the tables and the picture inline. */
export function profileHtml(p: ProfileRun): string {
  const names = buildNames(p);
  const table = (c: Compared) =>
    `<h2>${escapeXml(c.scenario)}${c.failed.length > 0 ? ` <span class="fail">FAIL: ${escapeXml(c.failed.join(', '))}</span>` : ''}</h2>
<table><tr><th>part</th><th>${escapeXml(names.base)}</th><th>${escapeXml(names.candidate)}</th><th>difference</th><th>verdict</th><th>how</th></tr>
${rows(c)
  .map(
    (r) =>
      `<tr class="${r[4] === 'DEARER' || r[4] === 'FAIL' ? 'dearer' : r[4] === 'cheaper' ? 'cheaper' : ''}">${r.map((x, i) => `<td${i > 0 && i < 4 ? ' class="n"' : ''}>${escapeXml(x.replace(/\*/g, ''))}</td>`).join('')}</tr>`,
  )
  .join('\n')}
</table>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bench:profile — ${escapeXml(names.candidate)} against ${escapeXml(names.base)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:90em}table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}tr.dearer td{background:#fde2e2}tr.cheaper td{background:#e2f5e2}.fail{color:#b00}</style></head>
<body><h1>bench:profile</h1>
<p>${escapeXml(names.base)} against ${escapeXml(names.candidate)}, ${escapeXml(p.date)}, node ${escapeXml(p.node)}. Instructions per request (k) under callgrind, medians of ${p.rounds} rounds of ${p.requests} requests after ${p.warmup} warm-up rounds, both builds counted side by side; each stage on the request's own path. A part is flagged when its median paired difference is beyond this run's noise and its floor and every paired round agrees.</p>
${p.compared.map(table).join('\n')}
${profileSvg(p).replace(/^<\?xml[^>]*>\s*/, '')}
</body></html>
`;
}
