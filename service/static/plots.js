// One uPlot chart per sensor. The chart keeps the sensor's full columns; what it draws is
// decimated to a min/max pair per pixel column of the visible range (recomputed on zoom and
// pan), so a 1e6-row series draws as fast as a 2000-row one. Downloads never go through this.
// Legend: click a column to toggle it; values under the cursor. Drag: zoom; shift+drag: pan;
// wheel: zoom around the cursor; double-click: whole range. A vertical line marks the
// playback time of the 3D view.

const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4d7c0f", "#be185d",
                "#475569", "#ca8a04", "#7c3aed", "#0f766e", "#b45309", "#1d4ed8", "#a21caf", "#65a30d"];

// The indices to draw of x[lo..hi): first, min, max and last of each of `buckets` runs (in order).
export function decimate(columns, lo, hi, buckets) {
  const n = hi - lo;
  if (n <= 4 * buckets) return columns.map((c) => c.slice(lo, hi));
  const keep = new Uint8Array(n);
  const size = n / buckets;
  for (let b = 0; b < buckets; b++) {
    const s = lo + Math.floor(b * size), e = Math.min(hi, lo + Math.floor((b + 1) * size));
    if (e <= s) continue;
    keep[s - lo] = 1; keep[e - 1 - lo] = 1;
    for (let c = 1; c < columns.length; c++) {
      const y = columns[c];
      let iMin = s, iMax = s;
      for (let i = s + 1; i < e; i++) {
        if (y[i] < y[iMin]) iMin = i;
        if (y[i] > y[iMax]) iMax = i;
      }
      keep[iMin - lo] = 1; keep[iMax - lo] = 1;
    }
  }
  let count = 0;
  for (let i = 0; i < n; i++) count += keep[i];
  return columns.map((c) => {
    const out = new Float64Array(count);
    for (let i = 0, k = 0; i < n; i++) if (keep[i]) out[k++] = c[lo + i];
    return out;
  });
}

function lowerBound(x, v) {
  let lo = 0, hi = x.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (x[mid] < v) lo = mid + 1; else hi = mid; }
  return lo;
}

// The sensor's rows as columns (Float64Array each, time first).
export function toColumns(rows, width) {
  const cols = Array.from({ length: width }, () => new Float64Array(rows.length));
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    for (let c = 0; c < width; c++) cols[c][i] = r[c];
  }
  return cols;
}

export class SensorChart {
  constructor(element, name, sensor, cursorTime) {
    this.name = name;
    this.full = toColumns(sensor.data, sensor.columns.length);
    this.cursorTime = cursorTime;  // () => the playback time, or null
    this.range = null;  // [x0, x1] zoomed to, null: all
    const width = Math.max(300, element.clientWidth - 12);
    const chart = this;
    const opts = {
      width, height: 220,
      scales: { x: { time: false } },
      series: [{ label: sensor.columns[0] }].concat(sensor.columns.slice(1).map((label, i) => (
        { label, stroke: COLORS[i % COLORS.length], width: 1.25, points: { show: false } }))),
      legend: { live: true },
      cursor: { drag: { x: true, y: false, setScale: true } },
      hooks: {
        setScale: [(u, key) => { if (key === "x" && !chart.redrawing) chart.onZoom(u); }],
        draw: [(u) => chart.drawTimeLine(u)],
        ready: [(u) => chart.attachPanAndWheel(u)],
      },
    };
    this.u = new uPlot(opts, this.drawn(0, this.full[0].length, width), element);
  }

  drawn(lo, hi, width) { return decimate(this.full, lo, hi, Math.max(50, Math.round(width))); }

  onZoom(u) {
    const x = this.full[0];
    if (!x.length) return;
    const min = u.scales.x.min, max = u.scales.x.max;
    const whole = min <= x[0] && max >= x[x.length - 1];
    this.range = whole ? null : [min, max];
    const lo = Math.max(0, lowerBound(x, min) - 1), hi = Math.min(x.length, lowerBound(x, max) + 1);
    this.redrawing = true;
    u.setData(this.drawn(lo, hi, u.bbox.width / devicePixelRatio), false);
    this.redrawing = false;
  }

  zoomTo(min, max) { this.u.setScale("x", { min, max }); }

  resetZoom() {
    const x = this.full[0];
    if (x.length) this.zoomTo(x[0], x[x.length - 1]);
  }

  attachPanAndWheel(u) {
    const over = u.over;
    over.addEventListener("wheel", (e) => {
      e.preventDefault();
      const { min, max } = u.scales.x;
      const at = u.posToVal(e.offsetX, "x");
      const f = e.deltaY < 0 ? 0.8 : 1.25;
      this.zoomTo(at - (at - min) * f, at + (max - at) * f);
    }, { passive: false });
    over.addEventListener("mousedown", (e) => {
      if (!e.shiftKey) return;
      e.stopPropagation();
      e.preventDefault();
      const start = e.clientX, { min, max } = u.scales.x;
      const perPx = (max - min) / (u.bbox.width / devicePixelRatio);
      const move = (m) => { const d = (m.clientX - start) * perPx; this.zoomTo(min - d, max - d); };
      const up = () => { window.removeEventListener("mousemove", move); window.removeEventListener("mouseup", up); };
      window.addEventListener("mousemove", move);
      window.addEventListener("mouseup", up);
    }, true);
    over.addEventListener("dblclick", () => this.resetZoom());
  }

  drawTimeLine(u) {
    const t = this.cursorTime();
    if (t == null || t < u.scales.x.min || t > u.scales.x.max) return;
    const x = Math.round(u.valToPos(t, "x", true));
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = "#f59e0b";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.restore();
  }

  redraw() { this.u.redraw(false, false); }
}

// A sweep's output over one of its parameters: the variations that have the output (finished),
// as points, or as one line per value of a second parameter (`by`). `table`: GET
// /v1/sweeps/{id}/table; x, y, by: column names. uPlot wants one ascending x for all series:
// x is every point's parameter value in order, each series null where the point is not its own.
export function sweepSeries(table, x, y, by) {
  const ix = table.columns.indexOf(x), iy = table.columns.indexOf(y), ib = by ? table.columns.indexOf(by) : -1;
  const points = table.rows.filter((r) => typeof r[ix] === "number" && typeof r[iy] === "number")
    .sort((a, b) => a[ix] - b[ix]);
  const groups = ib < 0 ? [null] : [...new Set(points.map((r) => r[ib]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const xs = Float64Array.from(points, (r) => r[ix]);
  const series = groups.map((g) => ({
    label: g === null ? y : `${by} = ${typeof g === "number" ? +g.toPrecision(6) : JSON.stringify(g)}`,
    values: points.map((r) => (g === null || r[ib] === g ? r[iy] : null)),
  }));
  return { x: xs, series, points: points.length };
}

export class SweepPlot {
  constructor(element, table, x, y, by) {
    const { x: xs, series } = sweepSeries(table, x, y, by);
    this.series = series;
    const lines = Boolean(by);
    const opts = {
      width: Math.max(300, element.clientWidth - 12), height: 320,
      scales: { x: { time: false } },
      axes: [{ label: x }, { label: y }],
      series: [{ label: x }].concat(series.map((s, i) => ({
        label: s.label, stroke: COLORS[i % COLORS.length], width: 1.25, spanGaps: true,
        points: { show: true, size: lines ? 5 : 7, fill: COLORS[i % COLORS.length] },
        ...(lines ? {} : { paths: () => null }),  // a scatter: points only
      }))),
      legend: { live: true },
    };
    this.u = new uPlot(opts, [xs, ...series.map((s) => s.values)], element);
  }

  destroy() { this.u.destroy(); }
}
