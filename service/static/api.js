// The HTTP API from the browser: the API key (asked once per browser session when the service
// requires one), JSON errors with their problems, and a job's live status (server-sent events,
// read with fetch so that the key goes in a header; polling where the stream is unavailable).

const KEY = "mbserve.apiKey";

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.code = err.code;
    this.detail = err.detail || [];
  }
}

function headers(extra = {}) {
  const key = sessionStorage.getItem(KEY);
  return key ? { ...extra, Authorization: `Bearer ${key}` } : extra;
}

function showKeyState() {
  const el = document.getElementById("key-state");
  if (el) el.textContent = sessionStorage.getItem(KEY) ? "API key set for this session" : "";
}

let asking = null;
function askKey(message) {
  // one dialog for every request that got a 401 meanwhile
  if (asking) return asking;
  const dialog = document.getElementById("key-dialog");
  document.getElementById("key-error").textContent = message || "";
  asking = new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      const key = document.getElementById("key-input").value.trim();
      if (key) sessionStorage.setItem(KEY, key);
      asking = null;
      showKeyState();
      resolve(Boolean(key));
    }, { once: true });
    dialog.showModal();
  });
  return asking;
}

export async function request(path, { method = "GET", body, raw = false } = {}) {
  for (;;) {
    const init = { method, headers: headers(body !== undefined ? { "Content-Type": "application/json" } : {}) };
    if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
    const answer = await fetch(path, init);
    if (answer.status === 401) {
      const had = sessionStorage.getItem(KEY);
      sessionStorage.removeItem(KEY);
      if (await askKey(had ? "That key was not accepted." : "")) continue;
    }
    if (!answer.ok) {
      let parsed = null;
      try { parsed = await answer.json(); } catch (e) { /* not JSON */ }
      throw new ApiError(answer.status, parsed);
    }
    return raw ? answer : answer.json();
  }
}

const FINISHED = new Set(["succeeded", "failed", "canceled"]);

// Whether this service streams job events (asked once, from its OpenAPI document, so that a
// service without the endpoint is polled without a failed request).
let streams = null;
function hasEvents() {
  streams ??= fetch("/openapi.json").then((r) => (r.ok ? r.json() : { paths: {} }))
    .then((doc) => "/v1/jobs/{job_id}/events" in (doc.paths || {})).catch(() => false);
  return streams;
}

// Calls onStatus(statusDocument) on every change until the job has finished; returns a stop function.
export function follow(jobId, onStatus) {
  let stopped = false;
  const controller = new AbortController();
  const poll = async () => {
    while (!stopped) {
      let doc;
      try { doc = await request(`/v1/jobs/${jobId}?wait=10`); } catch (e) { await sleep(2000); continue; }
      onStatus(doc);
      if (FINISHED.has(doc.status)) return;
      await sleep(300);
    }
  };
  const stream = async () => {
    if (!(await hasEvents())) { if (!stopped) poll(); return; }
    let answer;
    try {
      answer = await fetch(`/v1/jobs/${jobId}/events`, { headers: headers({ Accept: "text/event-stream" }),
                                                          signal: controller.signal });
    } catch (e) { if (!stopped) poll(); return; }
    const type = answer.headers.get("content-type") || "";
    if (!answer.ok || !type.startsWith("text/event-stream")) { if (!stopped) poll(); return; }
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "", ended = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const event = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).join("\n");
          if (!data) continue;
          const doc = JSON.parse(data);
          onStatus(doc);
          if (FINISHED.has(doc.status)) ended = true;
        }
      }
    } catch (e) { /* aborted or dropped */ }
    if (!stopped && !ended) poll();  // the stream broke off: go on by polling
  };
  stream();
  return () => { stopped = true; controller.abort(); };
}

// A download link's file, fetched with the key (a plain link cannot send the header).
export async function download(href) {
  const answer = await request(href, { raw: true });
  const name = (answer.headers.get("content-disposition") || "").match(/filename="([^"]+)"/);
  const url = URL.createObjectURL(await answer.blob());
  const a = Object.assign(document.createElement("a"), { href: url, download: name ? name[1] : href.split("/").pop() });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function hasKey() { return Boolean(sessionStorage.getItem(KEY)); }

export function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

showKeyState();
