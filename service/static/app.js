// The web interface: the caller's sweeps and jobs with live progress, a new job from an uploaded
// or pasted model, a job's page (status, warnings, error, sensor plots, 3D playback, downloads)
// and a sweep's page (progress, its table, an output plotted over a parameter).
import { ApiError, download, follow, hasKey, request, sleep } from "/static/api.js";
import { SensorChart, SweepPlot } from "/static/plots.js";

const main = document.getElementById("main");
const FINISHED = new Set(["succeeded", "failed", "canceled"]);
// for tests and the console: the charts and the 3D playback of the page shown
export const state = { charts: {}, playback: null, ready: false, stops: [] };
window.mbserve = state;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c.nodeType ? c : String(c));
  return e;
}

function progressBar(fraction) {
  return el("span", { class: "progress", title: `${(100 * fraction).toFixed(0)} %` },
            el("span", { style: `width:${(100 * fraction).toFixed(1)}%` }));
}

function when(iso) { return iso ? new Date(iso).toLocaleString() : "–"; }

function problemList(detail, prefix = "") {
  const items = Array.isArray(detail) ? detail : [];
  if (!items.length) return null;
  const local = (path) => (prefix && path.startsWith(prefix) ? path.slice(prefix.length) : path);
  return el("ul", { class: "problems" }, items.map((p) => el("li", {}, p.path ? el("code", {}, local(p.path)) : null,
                                                             " ", p.message || JSON.stringify(p))));
}

function reset() {
  state.stops.forEach((stop) => stop());
  state.stops = [];
  state.charts = {};
  state.playback = null;
  state.sweep = null;
  state.ready = false;
  main.replaceChildren();
}

// ------------------------------------------------------------------------------ the jobs list
function jobRow(job) {
  const pct = el("span", { class: "pct" }, `${(100 * job.progress).toFixed(0)} %`);
  return el("tr", { "data-id": job.id, "data-status": job.status },
            el("td", { class: "id" }, el("a", { href: `/jobs/${job.id}` }, job.id)),
            el("td", {}, when(job.createdAt)),
            el("td", {}, el("span", { class: `status ${job.status}` }, job.status)),
            el("td", {}, progressBar(job.progress), " ", pct),
            el("td", {}, job.error ? el("span", { class: "error" }, job.error.code) : ""));
}

async function jobsPage() {
  reset();
  main.append(el("h1", {}, "Jobs"), newJobForm());
  const table = el("table", { class: "jobs" },
                   el("thead", {}, el("tr", {}, ["Job", "Created", "Status", "Progress", ""].map((h) => el("th", {}, h)))),
                   el("tbody"));
  const sweeps = el("section", { class: "card", id: "sweeps", hidden: "" }, el("h2", {}, "Sweeps"),
                    el("table", { class: "jobs" }, el("thead", {}, el("tr", {}, ["Sweep", "Created", "Status",
                      "Progress", "Variations"].map((h) => el("th", {}, h)))), el("tbody")));
  main.append(sweeps, el("section", { class: "card" }, table));
  const body = table.tBodies[0];
  const followed = new Map();
  const update = (job) => {
    const old = body.querySelector(`tr[data-id="${job.id}"]`);
    const row = jobRow(job);
    if (old) old.replaceWith(row);
    return row;
  };
  const refresh = async () => {
    const listed = await request("/v1/sweeps?limit=20");
    sweeps.hidden = !listed.items.length;
    sweeps.querySelector("tbody").replaceChildren(...listed.items.map(sweepRow));
    const list = await request("/v1/jobs?limit=50");
    const rows = list.items.map((job) => body.querySelector(`tr[data-id="${job.id}"]`) || jobRow(job));
    body.replaceChildren(...rows);  // newest first, as the API lists them
    for (const job of list.items) {
      if (!FINISHED.has(job.status) && !followed.has(job.id)) {
        const stop = follow(job.id, (doc) => {
          update(doc);
          if (FINISHED.has(doc.status)) followed.delete(job.id);
        });
        followed.set(job.id, stop);
        state.stops.push(stop);
      }
    }
    if (!list.items.length) body.replaceChildren(el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No jobs yet.")));
  };
  await refresh();
  state.ready = true;
  // jobs submitted elsewhere (the command line, another tab) appear without a reload
  const timer = setInterval(() => refresh().catch(() => {}), 2000);
  state.stops.push(() => clearInterval(timer));
}

function sweepRow(sweep) {
  return el("tr", { "data-id": sweep.id, "data-status": sweep.status },
            el("td", { class: "id" }, el("a", { href: `/sweeps/${sweep.id}` }, sweep.id)),
            el("td", {}, when(sweep.createdAt)),
            el("td", {}, el("span", { class: `status ${sweep.status}` }, sweep.status)),
            el("td", {}, progressBar(sweep.progress), ` ${(100 * sweep.progress).toFixed(0)} %`),
            el("td", {}, `${sweep.done} done, ${sweep.failed} failed of ${sweep.total} (${sweep.design})`));
}

// ------------------------------------------------------------------------------ a new job
function newJobForm() {
  const text = el("textarea", { id: "model-text", spellcheck: "false",
                                placeholder: "Paste a model document (JSON), or choose a file" });
  const file = el("input", { type: "file", id: "model-file", accept: ".json,application/json" });
  const storeSolution = el("input", { type: "checkbox", id: "store-solution", checked: "" });
  const out = el("div", { id: "model-problems" });
  // the document's problems, each at its JSON path, or null when it can be run
  const check = async () => {
    let doc;
    try { doc = JSON.parse(text.value); } catch (e) {
      out.replaceChildren(el("p", { class: "error" }, `Not JSON: ${e.message}`));
      return null;
    }
    let report;
    try { report = await request("/v1/validate", { method: "POST", body: doc }); } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      out.replaceChildren(el("p", { class: "error" }, `${e.code || "error"}: ${e.message}`), problemList(e.detail));
      return null;
    }
    if (!report.ok) {
      out.replaceChildren(el("p", { class: "error" }, `${report.problems.length} problem(s):`), problemList(report.problems));
      return null;
    }
    const counts = Object.entries(report.summary || {}).filter(([, v]) => typeof v === "number").map(([k, v]) => `${v} ${k}`).join(", ");
    out.replaceChildren(el("p", { class: "muted", id: "model-ok" }, `Valid${counts ? `: ${counts}` : ""}`
                           + (report.warnings.length ? ` (${report.warnings.length} warning(s))` : "")));
    return doc;
  };
  let typing = null;
  text.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(() => check().catch(() => {}), 600); });
  const submit = async () => {
    clearTimeout(typing);
    const doc = await check();
    if (!doc) return;
    try {
      const job = await request("/v1/jobs", { method: "POST",
                                              body: { model: doc, store: { solution: storeSolution.checked } } });
      history.pushState(null, "", `/jobs/${job.id}`);
      route();
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      // paths within the uploaded document: the API's start at the request's "model"
      out.append(el("p", { class: "error" }, `${e.code || "error"}: ${e.message}`), problemList(e.detail, "model."));
    }
  };
  file.addEventListener("change", async () => {
    if (file.files.length) { text.value = await file.files[0].text(); submit(); }
  });
  return el("section", { class: "card", id: "new" },
            el("h2", {}, "New job"),
            text,
            el("div", { class: "row" }, file,
               el("label", {}, storeSolution, " store the solution (3D playback)"),
               el("button", { id: "model-submit", onclick: submit }, "Validate and run")),
            out);
}

// ------------------------------------------------------------------------------ a job's page
function statusBlock(job) {
  return el("section", { class: "card", id: "job-status", "data-status": job.status },
            el("div", { class: "row" }, el("span", { class: `status ${job.status}` }, job.status),
               progressBar(job.progress), `${(100 * job.progress).toFixed(0)} %`),
            el("dl", { class: "facts" },
               el("dt", {}, "model"), el("dd", {}, job.modelId),
               el("dt", {}, "created"), el("dd", {}, when(job.createdAt)),
               el("dt", {}, "started"), el("dd", {}, when(job.startedAt)),
               el("dt", {}, "finished"), el("dd", {}, when(job.finishedAt))),
            job.error ? errorBlock(job.error) : null);
}

function errorBlock(error) {
  const detail = error.detail;
  const items = detail && !Array.isArray(detail) && detail.items && detail.items.length
    ? el("p", {}, "items involved: ", detail.items.map((i) => el("code", { class: "path" }, i)).reduce(
      (acc, x) => acc.concat(acc.length ? [", ", x] : [x]), []))
    : null;
  return el("div", { class: "error", id: "job-error" }, el("p", {}, el("b", {}, error.code), ": ", error.message),
            items, problemList(detail));
}

function downloads(jobId, hasSolution) {
  const base = `/v1/jobs/${jobId}`;
  const link = (href, label) => el("a", { href, download: "" }, label);
  return el("p", { class: "row" }, "Download:", link(`${base}/results`, "results (JSON)"),
            hasSolution ? link(`${base}/solution`, "solution (JSON)") : null,
            hasSolution ? link(`${base}/solution?format=csv`, "solution (Exudyn file)") : null);
}

async function jobPage(jobId) {
  reset();
  main.append(el("h1", {}, "Job ", el("code", {}, jobId)));
  let job;
  try { job = await request(`/v1/jobs/${jobId}`); } catch (e) {
    main.append(el("p", { class: "error" }, e.message));
    state.ready = true;
    return;
  }
  let status = statusBlock(job);
  main.append(status);
  if (!FINISHED.has(job.status)) {
    await new Promise((resolve) => {
      state.stops.push(follow(jobId, (doc) => {
        const next = statusBlock(doc);
        status.replaceWith(next);
        status = next;
        if (FINISHED.has(doc.status)) resolve(doc);
      }));
    });
    job = await request(`/v1/jobs/${jobId}`);  // the finished job's links (links.solution when stored)
  }
  if (job.status === "canceled") { state.ready = true; return; }
  const results = await request(`/v1/jobs/${jobId}/results?data=false`);  // the data per chart, when shown
  const solver = results.solver || {};
  status.querySelector("dl").append(
    el("dt", {}, "solver"), el("dd", {}, `${solver.solverType || "–"}: ${solver.steps ?? "–"} steps, `
      + `${solver.newtonIterations ?? "–"} Newton iterations, ${(solver.solveSeconds ?? 0).toFixed(3)} s`));
  if (results.warnings && results.warnings.length) {
    main.append(el("section", { class: "card", id: "warnings" }, el("h2", {}, "Warnings"),
                   el("ul", {}, results.warnings.map((w) => el("li", {}, el("b", {}, w.code), " ",
                                                              w.item ? el("code", { class: "path" }, w.item) : null,
                                                              " ", w.message)))));
  }
  const solution = job.links.solution ? await request(job.links.solution) : null;
  main.append(downloads(jobId, Boolean(solution)));
  const view = el("section", { class: "card", id: "view3d" }, el("h2", {}, "3D playback"));
  main.append(view);
  const charts = el("div", { class: "charts", id: "charts" });
  main.append(el("h2", {}, "Sensors"), charts);
  const drawn = drawCharts(jobId, results.sensors || {}, charts);
  if (solution && solution.data.length) await show3d(view, job, solution);
  else {
    view.append(el("p", { class: "muted" }, "No solution stored for this job. "),
                el("button", { onclick: () => rerun(job) }, "Run again with the solution"));
  }
  await drawn;
  state.ready = true;
}

async function rerun(job) {
  const again = await request("/v1/jobs", { method: "POST", body: { modelId: job.modelId, store: { solution: true } } });
  history.pushState(null, "", `/jobs/${again.id}`);
  route();
}

// A box per sensor; a chart's data is fetched and drawn when its box comes near the viewport.
// Resolves when the charts first in view are drawn.
function drawCharts(jobId, sensors, container) {
  const playbackTime = () => (state.playback ? state.playback.time : null);
  const boxes = Object.entries(sensors).map(([name, sensor]) => {
    const base = `/v1/jobs/${jobId}/sensors/${encodeURIComponent(name)}`;
    return el("div", { class: "chart", "data-sensor": name },
              el("h3", {}, name, " ", el("small", {}, `${sensor.sensorType} ${sensor.item ?? ""} · `
                                                   + `${sensor.outputVariableType ?? ""} · ${sensor.rows} rows`),
                 el("span", { class: "dl" }, el("a", { href: base, download: "" }, "JSON"), " ",
                    el("a", { href: `${base}?format=csv`, download: "" }, "CSV"))));
  });
  container.append(...boxes);
  const loading = new Map();
  const load = (box) => {
    const name = box.dataset.sensor;
    if (!loading.has(name)) {
      loading.set(name, request(`/v1/jobs/${jobId}/sensors/${encodeURIComponent(name)}`).then((sensor) => {
        state.charts[name] = new SensorChart(box, name, sensor, playbackTime);
      }));
    }
    return loading.get(name);
  };
  state.loadAllCharts = () => Promise.all(boxes.map(load));
  return new Promise((resolve) => {
    let first = true;
    const observer = new IntersectionObserver((entries) => {
      const shown = entries.filter((e) => e.isIntersecting).map((e) => { observer.unobserve(e.target); return load(e.target); });
      if (first) { first = false; Promise.all(shown).then(resolve, resolve); }
    }, { rootMargin: "300px" });
    boxes.forEach((b) => observer.observe(b));
    state.stops.push(() => observer.disconnect());
    if (!boxes.length) resolve();
  });
}

async function show3d(view, job, solution) {
  let model;
  try { model = await request(`/v1/models/${job.modelId}?expanded=true`); } catch (e) {
    view.append(el("p", { class: "error" }, `The model could not be loaded: ${e.message}`));
    return;
  }
  const { Playback } = await import("/static/scene.js");
  const box = el("div", { id: "scene-box" });
  const slider = el("input", { type: "range", id: "time-slider", min: 0, max: solution.data.length - 1, value: 0, step: 1 });
  const label = el("span", { class: "time" });
  const play = el("button", { id: "play" }, "Play");
  const speed = el("select", { id: "speed" }, [0.1, 0.25, 0.5, 1, 2, 4].map((s) => el("option", s === 1 ? { value: s, selected: "" } : { value: s }, `${s}×`)));
  view.append(box, el("div", { class: "player" }, play, speed, slider, label),
              el("p", { class: "muted" }, "Drag: orbit · right-drag: pan · wheel: zoom"));
  let playback;
  try { playback = new Playback(box, model, solution); } catch (e) {
    box.replaceWith(el("p", { class: "error" }, `3D view unavailable: ${e.message}`));
    return;
  }
  state.playback = playback;
  const show = (r) => {
    playback.setIndex(r);
    slider.value = playback.index;
    label.textContent = `t = ${playback.time.toFixed(4)} s`;
    for (const chart of Object.values(state.charts)) chart.redraw();
  };
  slider.addEventListener("input", () => show(Number(slider.value)));
  let playing = false, last = 0;
  const tick = (now) => {
    if (!playing) return;
    const times = playback.times, end = times[times.length - 1];
    let t = playback.time + ((now - last) / 1000) * Number(speed.value);
    last = now;
    if (t >= end) { t = end; playing = false; play.textContent = "Play"; }
    show(playback.indexAt(t));
    if (playing) requestAnimationFrame(tick);
  };
  play.addEventListener("click", () => {
    playing = !playing;
    play.textContent = playing ? "Pause" : "Play";
    if (playing) {
      if (playback.index >= playback.times.length - 1) show(0);
      last = performance.now();
      requestAnimationFrame(tick);
    }
  });
  state.stops.push(() => { playing = false; });
  state.showRow = show;
  show(0);
}

// ------------------------------------------------------------------------------ a sweep's page
const TABLE_ROWS = 500;  // shown; the whole table is the CSV download

function sweepStatus(sweep, cancel) {
  const running = sweep.status === "queued" || sweep.status === "running";
  return el("section", { class: "card", id: "sweep-status", "data-status": sweep.status },
            el("div", { class: "row" }, el("span", { class: `status ${sweep.status}` }, sweep.status),
               progressBar(sweep.progress), `${(100 * sweep.progress).toFixed(0)} %`,
               running ? el("button", { id: "sweep-cancel", onclick: cancel }, "Cancel the rest") : null),
            el("dl", { class: "facts" },
               el("dt", {}, "variations"), el("dd", { id: "sweep-counts" }, `${sweep.total}: ${sweep.done} done, `
                 + `${sweep.failed} failed, ${sweep.canceled} canceled, ${sweep.running} running, ${sweep.queued} queued`),
               el("dt", {}, "design"), el("dd", {}, sweep.design + (sweep.seed != null ? ` (seed ${sweep.seed})` : "")),
               el("dt", {}, "model"), el("dd", {}, sweep.modelId),
               el("dt", {}, "created"), el("dd", {}, when(sweep.createdAt))),
            el("p", { class: "row" }, "Download:", el("a", { href: `${sweep.links.table}?format=csv`, download: "" }, "table (CSV)"),
               el("a", { href: sweep.links.table, download: "" }, "table (JSON)")));
}

function cell(v) {
  if (v === null || v === undefined) return "";
  return typeof v === "number" ? String(+v.toPrecision(8)) : typeof v === "string" ? v : JSON.stringify(v);
}

function sweepTable(table) {
  const status = table.columns.indexOf("status"), job = table.columns.indexOf("jobId");
  const rows = table.rows.slice(0, TABLE_ROWS).map((r) => el("tr", { "data-status": r[status] }, r.map((v, i) => el("td", {},
    i === job ? el("a", { href: `/jobs/${v}` }, v.slice(0, 8) + "…") : i === status
      ? el("span", { class: `status ${v}` }, v) : cell(v)))));
  return el("section", { class: "card", id: "sweep-table" }, el("h2", {}, "Table"),
            table.rows.length > TABLE_ROWS ? el("p", { class: "muted" }, `The first ${TABLE_ROWS} of ${table.rows.length} `
              + "rows; the CSV has them all.") : null,
            el("div", { class: "scroll" }, el("table", { class: "jobs sweep" },
               el("thead", {}, el("tr", {}, table.columns.map((c) => el("th", {}, c)))), el("tbody", {}, rows))));
}

// The plot's choices: an output (y) over a parameter (x), optionally a line per value of another.
function sweepPlotCard(sweep) {
  const params = sweep.parameters, outputs = sweep.outputs;
  const select = (id, options, chosen) => el("select", { id }, options.map(
    (o) => el("option", o === chosen ? { value: o, selected: "" } : { value: o }, o || "none (a scatter)")));
  const x = select("plot-x", params, params[0]), y = select("plot-y", outputs, outputs[0]);
  const by = select("plot-by", ["", ...params], params.length === 2 ? params[1] : "");
  const box = el("div", { class: "chart", id: "sweep-plot" });
  const card = el("section", { class: "card" }, el("h2", {}, "Plot"),
                  el("div", { class: "row" }, el("label", {}, "output ", y), el("label", {}, "over ", x),
                     el("label", {}, "a line per ", by)), box);
  let plot = null;
  const draw = (data) => {
    if (plot) plot.destroy();
    box.replaceChildren();
    if (!outputs.length) { box.append(el("p", { class: "muted" }, "This sweep has no outputs to plot.")); plot = null; return; }
    plot = new SweepPlot(box, data, x.value, y.value, by.value && by.value !== x.value ? by.value : null);
    state.sweep.plot = plot;
  };
  [x, y, by].forEach((s) => s.addEventListener("change", () => draw(state.sweep.table)));
  return { card, draw };
}

async function sweepPage(sweepId) {
  reset();
  main.append(el("h1", {}, "Sweep ", el("code", {}, sweepId)));
  let sweep;
  try { sweep = await request(`/v1/sweeps/${sweepId}`); } catch (e) {
    main.append(el("p", { class: "error" }, e.message));
    state.ready = true;
    return;
  }
  let table = await request(sweep.links.table);
  state.sweep = { table, plot: null };
  const cancel = async () => { await request(`/v1/sweeps/${sweepId}`, { method: "DELETE" }); await update(); };
  let status = sweepStatus(sweep, cancel), shown = sweepTable(table);
  const plot = sweepPlotCard(sweep);
  main.append(status, plot.card, shown);
  plot.draw(table);
  const update = async () => {
    const now = await request(`/v1/sweeps/${sweepId}`);
    table = await request(now.links.table);
    state.sweep.table = table;
    const next = sweepStatus(now, cancel), rows = sweepTable(table);
    status.replaceWith(next);
    shown.replaceWith(rows);
    status = next;
    shown = rows;
    plot.draw(table);
    return now;
  };
  state.ready = true;
  let stopped = false;
  state.stops.push(() => { stopped = true; });
  while (!stopped && (sweep.status === "queued" || sweep.status === "running")) {
    await sleep(2000);
    if (!stopped) sweep = await update();
  }
}

// ------------------------------------------------------------------------------ routing
function route() {
  const m = location.pathname.match(/^\/(jobs|sweeps)\/([^/]+)$/);
  const id = m ? decodeURIComponent(m[2]) : null;
  const page = !m ? jobsPage() : m[1] === "jobs" ? jobPage(id) : sweepPage(id);
  page.catch((e) => { main.append(el("p", { class: "error" }, e.message)); state.ready = true; });
}

window.addEventListener("popstate", route);
document.addEventListener("click", (e) => {  // links within the interface without a reload
  const a = e.target.closest("a");
  if (a && a.hasAttribute("download") && hasKey() && !a.href.startsWith("blob:")) {
    e.preventDefault();
    download(a.pathname + a.search).catch((err) => alert(err.message));
    return;
  }
  if (!a || a.hasAttribute("download") || a.origin !== location.origin || a.pathname.startsWith("/v1/")
      || a.pathname === "/docs" || e.ctrlKey || e.metaKey) return;
  e.preventDefault();
  history.pushState(null, "", a.pathname + a.hash);
  route();
});
route();
