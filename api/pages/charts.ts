/**
 * Server-rendered SVG charts for the console: no script, no external assets, readable without colour. Each chart
 * is a `<figure>` with an SVG (`role="img"`, a `<title>` and `<desc>` summarising the data) plus a visually hidden
 * table of the same numbers for screen readers and for pages read without images.
 */
import { escapeHtml } from '../../core/html.js';

export interface ChartPoint {
  /** The x label, e.g. `2026-11-25` or `GET /items`. */
  label: string;
  value: number;
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
}

export interface ChartOptions {
  title: string;
  /** How a value is written on the axis, in the table and in the description (e.g. cents → `$1.23`). */
  format?: (value: number) => string;
  width?: number;
  height?: number;
  /** Shown instead of the chart when every value is zero or there are no points. */
  empty?: string;
}

const PALETTE = ['#2856b6', '#c2571a', '#1b6b2c', '#7a3cb8'];
const MARGIN = { top: 16, right: 12, bottom: 44, left: 64 };

const plain = (v: number) => String(v);

/** A round upper bound for the y axis and its tick step (1, 2 or 5 × 10^n). */
export function niceScale(max: number, ticks = 4): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 1 };
  const raw = max / ticks;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? 10 * magnitude;
  const stepRounded = Number.isInteger(max) ? Math.max(1, Math.round(step)) : step;
  return { top: Math.ceil(max / stepRounded) * stepRounded, step: stepRounded };
}

function emptyFigure(opts: ChartOptions): string {
  return `<figure class="chart chart-empty"><figcaption>${escapeHtml(opts.title)}</figcaption>
<p class="muted">${escapeHtml(opts.empty ?? 'No data yet.')}</p></figure>`;
}

function dataTable(series: ChartSeries[], format: (v: number) => string, title: string): string {
  const labels = series[0]?.points.map((p) => p.label) ?? [];
  const head = series.map((s) => `<th scope="col">${escapeHtml(s.name)}</th>`).join('');
  const rows = labels
    .map(
      (label, i) =>
        `<tr><th scope="row">${escapeHtml(label)}</th>${series
          .map((s) => `<td>${escapeHtml(format(s.points[i]?.value ?? 0))}</td>`)
          .join('')}</tr>`,
    )
    .join('');
  return `<table class="visually-hidden"><caption>${escapeHtml(title)}</caption><thead><tr><th scope="col">Label</th>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

function describe(series: ChartSeries[], format: (v: number) => string): string {
  return series
    .map((s) => {
      const total = s.points.reduce((a, p) => a + p.value, 0);
      const peak = s.points.reduce(
        (best, p) => (p.value > best.value ? p : best),
        s.points[0] ?? { label: '', value: 0 },
      );
      return `${s.name}: ${s.points.length} points, total ${format(total)}, highest ${format(peak.value)} on ${peak.label}.`;
    })
    .join(' ');
}

/** Which x labels to print so they do not overlap (first, last and evenly spaced ones in between). */
function labelEvery(count: number, plotWidth: number): number {
  const fit = Math.max(1, Math.floor(plotWidth / 70));
  return Math.max(1, Math.ceil(count / fit));
}

function axes(top: number, step: number, w: number, h: number, format: (v: number) => string): string {
  const plotH = h - MARGIN.top - MARGIN.bottom;
  let out = '';
  for (let v = 0; v <= top + step / 2; v += step) {
    const y = MARGIN.top + plotH - (v / top) * plotH;
    out += `<line x1="${MARGIN.left}" x2="${w - MARGIN.right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#ddd"/>`;
    out += `<text x="${MARGIN.left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#444">${escapeHtml(format(v))}</text>`;
  }
  out += `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#444"/>`;
  out += `<line x1="${MARGIN.left}" x2="${w - MARGIN.right}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="#444"/>`;
  return out;
}

function legend(series: ChartSeries[]): string {
  if (series.length < 2) return '';
  return `<p class="legend">${series
    .map(
      (s, i) =>
        `<span><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${PALETTE[i % PALETTE.length]}"/></svg> ${escapeHtml(s.name)}</span>`,
    )
    .join(' ')}</p>`;
}

/** Vertical bars, one group per label (all series share the labels of the first). */
export function barChart(series: ChartSeries[], opts: ChartOptions): string {
  return chart('bar', series, opts);
}

/** Lines with a dot per point (all series share the labels of the first). */
export function lineChart(series: ChartSeries[], opts: ChartOptions): string {
  return chart('line', series, opts);
}

function chart(kind: 'bar' | 'line', series: ChartSeries[], opts: ChartOptions): string {
  const format = opts.format ?? plain;
  const labels = series[0]?.points.map((p) => p.label) ?? [];
  const max = Math.max(0, ...series.flatMap((s) => s.points.map((p) => p.value)));
  if (labels.length === 0 || max <= 0) return emptyFigure(opts);
  const w = opts.width ?? 640;
  const h = opts.height ?? 240;
  const plotW = w - MARGIN.left - MARGIN.right;
  const plotH = h - MARGIN.top - MARGIN.bottom;
  const { top, step } = niceScale(max);
  const slot = plotW / labels.length;
  const y = (v: number) => MARGIN.top + plotH - (v / top) * plotH;
  let marks = '';
  series.forEach((s, si) => {
    const colour = PALETTE[si % PALETTE.length];
    if (kind === 'bar') {
      const barW = Math.max(1, (slot * 0.8) / series.length);
      s.points.forEach((p, i) => {
        const x = MARGIN.left + i * slot + slot * 0.1 + si * barW;
        marks += `<rect x="${x.toFixed(1)}" y="${y(p.value).toFixed(1)}" width="${barW.toFixed(1)}" height="${(MARGIN.top + plotH - y(p.value)).toFixed(1)}" fill="${colour}"><title>${escapeHtml(`${s.name}, ${p.label}: ${format(p.value)}`)}</title></rect>`;
      });
    } else {
      const xy = s.points.map((p, i) => [MARGIN.left + i * slot + slot / 2, y(p.value)] as const);
      marks += `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${xy.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' ')}"/>`;
      xy.forEach(([a, b], i) => {
        marks += `<circle cx="${a.toFixed(1)}" cy="${b.toFixed(1)}" r="2.5" fill="${colour}"><title>${escapeHtml(`${s.name}, ${s.points[i]!.label}: ${format(s.points[i]!.value)}`)}</title></circle>`;
      });
    }
  });
  const every = labelEvery(labels.length, plotW);
  const last = labels.length - 1;
  // Evenly spaced labels, and the last one (right-aligned so it stays inside); none too close to the last.
  const xLabels = labels
    .map((label, i) =>
      i === last || (i % every === 0 && last - i >= every)
        ? `<text x="${(MARGIN.left + i * slot + (i === last && last > 0 ? slot : slot / 2)).toFixed(1)}" y="${h - MARGIN.bottom + 16}" text-anchor="${i === last && last > 0 ? 'end' : 'middle'}" font-size="11" fill="#444">${escapeHtml(label)}</text>`
        : '',
    )
    .join('');
  const desc = describe(series, format);
  return `<figure class="chart"><figcaption>${escapeHtml(opts.title)}</figcaption>
<svg role="img" viewBox="0 0 ${w} ${h}" width="100%" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg"><title>${escapeHtml(opts.title)}</title><desc>${escapeHtml(desc)}</desc>${axes(top, step, w, h, format)}${marks}${xLabels}</svg>
${legend(series)}${dataTable(series, format, opts.title)}</figure>`;
}

/** A horizontal progress bar of `used` against `limit` (for spend against caps); text says the same. */
export function capBar(used: number, limit: number | null, format: (v: number) => string = plain): string {
  if (limit == null) return `<span class="muted">${escapeHtml(format(used))} (no cap)</span>`;
  const ratio = limit > 0 ? Math.min(1, used / limit) : 1;
  const pct = Math.round(ratio * 100);
  const colour = ratio >= 0.9 ? '#a4161a' : ratio >= 0.7 ? '#c2571a' : '#1b6b2c';
  return `<span class="capbar"><svg width="120" height="10" role="img" aria-label="${escapeHtml(`${format(used)} of ${format(limit)} (${pct}%)`)}"><rect width="120" height="10" fill="#e6e6e6"/><rect width="${(120 * ratio).toFixed(1)}" height="10" fill="${colour}"/></svg> ${escapeHtml(format(used))} / ${escapeHtml(format(limit))}</span>`;
}
