/**
 * Horizontal stacked bar charts as plain SVG text (no dependency): the pictures bench:instr and
 * bench:load write beside their Markdown. Each bar is a row of segments laid end to end from
 * zero; a legend names the segments by colour.
 */

export interface Segment {
  /** The legend's name for it (segments of the same name share a colour). */
  readonly label: string;
  readonly value: number;
}

export interface Bar {
  readonly label: string;
  readonly segments: readonly Segment[];
  /** Written after the bar's end (default: its total). */
  readonly note?: string;
}

export interface Chart {
  readonly title: string;
  /** The axis' unit, e.g. "instructions per request". */
  readonly unit: string;
  readonly bars: readonly Bar[];
  /** Formats an axis or total value (default: k/M suffixes). */
  readonly format?: (v: number) => string;
}

/** 20 distinct colours (Tableau 20's order): a chart with more segment names repeats them, said in its legend's order. */
const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
  '#a0cbe8',
  '#ffbe7d',
  '#8cd17d',
  '#b6992d',
  '#499894',
  '#86bcb6',
  '#d37295',
  '#fabfd2',
  '#79706e',
  '#d4a6c8',
];

export function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

export function compact(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toFixed(2)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return `${+v.toFixed(1)}`;
}

/** A round step for about `n` ticks up to `max`. */
function tickStep(max: number, n = 6): number {
  const raw = max / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p) || 1;
}

/** The chart as an SVG document. Negative or non-finite segment values are refused. */
export function stackedBarsSvg(chart: Chart): string {
  const fmt = chart.format ?? compact;
  for (const b of chart.bars)
    for (const s of b.segments) if (!Number.isFinite(s.value) || s.value < 0) throw new Error(`${b.label} / ${s.label}: a segment must be ≥ 0, got ${s.value}`);
  const labels = [...new Set(chart.bars.flatMap((b) => b.segments.map((s) => s.label)))];
  const colour = new Map(labels.map((l, i) => [l, PALETTE[i % PALETTE.length]!]));
  const totals = chart.bars.map((b) => b.segments.reduce((a, s) => a + s.value, 0));
  const step = tickStep(Math.max(1, ...totals));
  const max = Math.ceil(Math.max(1, ...totals) / step) * step;
  const labelW = Math.min(520, 12 + 6.8 * Math.max(...chart.bars.map((b) => b.label.length)));
  const plotW = 560;
  const barH = 22;
  const gap = 12;
  const top = 44;
  const plotH = chart.bars.length * (barH + gap);
  const legendCols = 3;
  const legendRows = Math.ceil(labels.length / legendCols);
  const noteW = 16 + 6.6 * Math.max(...chart.bars.map((b, i) => (b.note ?? fmt(totals[i]!)).length));
  const width = Math.ceil(labelW + plotW + noteW);
  const height = top + plotH + 36 + legendRows * 20 + 12;
  const x = (v: number) => labelW + (v / max) * plotW;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600">${escapeXml(chart.title)}</text>`,
  );
  for (let v = 0; v <= max + step / 2; v += step) {
    out.push(
      `<line x1="${x(v).toFixed(1)}" y1="${top - 4}" x2="${x(v).toFixed(1)}" y2="${top + plotH}" stroke="#e3e3e3"/>`,
      `<text x="${x(v).toFixed(1)}" y="${top + plotH + 14}" text-anchor="middle" fill="#555">${escapeXml(fmt(v))}</text>`,
    );
  }
  out.push(`<text x="${(labelW + plotW / 2).toFixed(1)}" y="${top + plotH + 30}" text-anchor="middle" fill="#333">${escapeXml(chart.unit)}</text>`);
  chart.bars.forEach((b, i) => {
    const y = top + i * (barH + gap);
    out.push(`<text x="${labelW - 8}" y="${y + barH / 2 + 4}" text-anchor="end">${escapeXml(b.label)}</text>`);
    let at = 0;
    for (const s of b.segments) {
      if (s.value > 0)
        out.push(
          `<rect x="${x(at).toFixed(1)}" y="${y}" width="${Math.max(0.5, x(at + s.value) - x(at)).toFixed(1)}" height="${barH}" fill="${colour.get(s.label)}"><title>${escapeXml(`${b.label}: ${s.label} ${fmt(s.value)}`)}</title></rect>`,
        );
      at += s.value;
    }
    out.push(`<text x="${(x(at) + 6).toFixed(1)}" y="${y + barH / 2 + 4}" fill="#333">${escapeXml(b.note ?? fmt(totals[i]!))}</text>`);
  });
  labels.forEach((l, i) => {
    const lx = 12 + (i % legendCols) * Math.floor((width - 24) / legendCols);
    const ly = top + plotH + 44 + Math.floor(i / legendCols) * 20;
    out.push(`<rect x="${lx}" y="${ly}" width="12" height="12" fill="${colour.get(l)}"/>`, `<text x="${lx + 18}" y="${ly + 10}">${escapeXml(l)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
