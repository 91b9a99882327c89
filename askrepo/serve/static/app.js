// askrepo web page: plain JS over the JSON API (docs/api.md). No build step.
"use strict";

const $ = (sel) => document.querySelector(sel);
const state = { repos: [], names: {} };

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function headers(extra) {
  const h = Object.assign({ Accept: "application/json" }, extra || {});
  const tok = $("#token") ? $("#token").value.trim() : "";
  if (tok) h.Authorization = "Bearer " + tok;
  return h;
}

function say(text, info) {
  const m = $("#message");
  m.textContent = text || "";
  m.className = info ? "info" : "";
}

async function api(path, params) {
  const url = path + "?" + new URLSearchParams(params || {}).toString();
  const res = await fetch(url, { headers: headers() });
  let data;
  try { data = await res.json(); } catch (e) { data = { error: res.status + " " + res.statusText }; }
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function repoParam() { return $("#repo").value || "all"; }
function repoName(path) { return state.names[path] || path; }

function codeTable(lines, html, start, hlFrom, hlTo, ids) {
  const rows = lines.map((line, i) => {
    const n = start + i;
    const cls = n >= hlFrom && n <= hlTo ? ' class="hl"' : "";
    const body = html ? html[i] : esc(line);
    return `<tr${ids ? ` id="L${n}"` : ""}${cls}><td class="ln">${n}</td><td class="src">${body || " "}</td></tr>`;
  });
  return `<div class="codewrap"><table class="code">${rows.join("")}</table></div>`;
}

// ---------------------------------------------------------------------------------- repos
async function loadRepos() {
  try {
    const data = await api("/api/repos");
    state.repos = data.repos;
    const sel = $("#repo");
    const keep = sel.value;
    sel.innerHTML = '<option value="all">all repositories</option>' + data.repos
      .map((r) => `<option value="${esc(r.name)}">${esc(r.name)}${r.indexed ? "" : " (not indexed)"}</option>`).join("");
    data.repos.forEach((r) => { state.names[r.path] = r.name; });
    if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
    if (data.repos.length === 1) sel.value = data.repos[0].name;
  } catch (e) { say(e.message); }
}

// ---------------------------------------------------------------------------------- search
async function search(ev) {
  if (ev) ev.preventDefault();
  const q = $("#q").value.trim();
  if (!q) return;
  $("#answer").hidden = true;
  say("searching…", true);
  try {
    const data = await api("/api/search", {
      q, repo: repoParam(), mode: $("#mode").value, k: 10, highlight: 1,
      include_tests: $("#include-tests").value, include_docs: $("#include-docs").value,
    });
    renderHits(data);
    say(`${data.hits.length} results in ${Math.round(data.elapsed_ms)} ms` +
      (data.filters && data.filters.length ? " · " + data.filters.join(" · ") : ""), true);
  } catch (e) { say(e.message); }
}

function renderHits(data) {
  const multi = data.repos.length > 1;
  const PREVIEW = 12;
  $("#results").innerHTML = data.hits.map((h) => {
    const lines = h.text.split("\n");
    const shown = lines.slice(0, PREVIEW);
    const more = lines.length > PREVIEW ? `<div class="more">… ${lines.length - PREVIEW} more lines</div>` : "";
    const loc = `${h.path}:${h.start_line}-${h.end_line}`;
    return `<div class="hit">
      <div class="hit-head"><span class="rank">${h.rank}.</span>
        <a href="#" class="hit-link" data-repo="${esc(h.repo)}" data-path="${esc(h.path)}"
           data-start="${h.start_line}" data-end="${h.end_line}">${esc(loc)}</a>
        <span class="sym">${esc(h.symbol || "(" + h.kind + ")")}</span>
        ${multi ? `<span class="repo-tag">${esc(repoName(h.repo))}</span>` : ""}</div>
      ${codeTable(shown, h.html ? h.html.slice(0, PREVIEW) : null, h.start_line, 0, -1)}${more}</div>`;
  }).join("") || `<p>No results for <b>${esc(data.query)}</b>.</p>`;
}

// ---------------------------------------------------------------------------------- viewer
async function openFile(repo, path, start, end) {
  start = Number(start); end = Number(end || start);
  const from = Math.max(1, start - 150);
  try {
    const data = await api("/api/file", { repo: repoName(repo), path, start: from, end: end + 150, highlight: 1 });
    $("#viewer-path").textContent = `${data.name} · ${data.path}:${start}-${end}` +
      (data.changed_since_index ? " (changed since indexed)" : "");
    $("#viewer-body").innerHTML = codeTable(data.lines, data.html, data.start_line, start, end, true);
    $("#viewer").hidden = false;
    const first = document.getElementById("L" + start);
    if (first) first.scrollIntoView({ block: "center" });
    history.replaceState(null, "", "#view=" + encodeURIComponent([repoName(repo), path, start, end].join("|")));
  } catch (e) { say(e.message); }
}

// ---------------------------------------------------------------------------------- ask
function linkCitations(html, cites) {
  // [1], [1, 2], [2-4] → links to the cited lines (numbers without a citation stay text)
  return html.replace(/\[(\d+(?:\s*[-–]\s*\d+)?(?:\s*,\s*\d+(?:\s*[-–]\s*\d+)?)*)\]/g, (all, inner) => {
    const parts = inner.split(/\s*,\s*/).map((item) => {
      const m = item.match(/^(\d+)(?:\s*[-–]\s*(\d+))?$/);
      if (!m) return esc(item);
      const nums = m[2] ? [] : [Number(m[1])];
      if (m[2]) for (let n = Number(m[1]); n <= Number(m[2]); n++) nums.push(n);
      return nums.map((n) => {
        const c = cites[n];
        if (!c) return String(n);
        return `<a class="cite" data-n="${n}" data-repo="${esc(c.repo || "")}" data-path="${esc(c.path)}" data-start="${c.start_line}" data-end="${c.end_line}" title="${esc(c.path)}:${c.start_line}-${c.end_line}">${n}</a>`;
      }).join(", ");
    });
    return "[" + parts.join(", ") + "]";
  });
}

function inlineMarkdown(para, cites) {
  // `code` spans of any backtick run (``x``, ```a ``b`` c```: the card uses a longer run
  // when the code holds backticks); citations linked outside code only
  const out = [];
  const span = /(`+)([\s\S]*?[^`])\1(?!`)/;
  let rest = para;
  for (;;) {
    const m = span.exec(rest);
    if (!m) { out.push(linkCitations(esc(rest), cites)); break; }
    out.push(linkCitations(esc(rest.slice(0, m.index)), cites));
    let code = m[2];
    if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ")) code = code.slice(1, -1);
    out.push(`<code>${esc(code)}</code>`);
    rest = rest.slice(m.index + m[0].length);
  }
  return out.join("");
}

function renderMarkdown(text, cites) {
  // just enough Markdown: ``` fences (on a line of their own), `code`, paragraphs
  const out = [];
  let fence = null;
  let prose = [];
  const flush = () => {
    prose.join("\n").split(/\n{2,}/).forEach((para) => {
      if (para.trim()) out.push("<p>" + inlineMarkdown(para, cites).replace(/\n/g, "<br>") + "</p>");
    });
    prose = [];
  };
  text.split("\n").forEach((line) => {
    if (/^\s*```/.test(line)) {
      if (fence === null) { flush(); fence = []; } else { out.push(`<pre>${esc(fence.join("\n"))}</pre>`); fence = null; }
    } else if (fence !== null) {
      fence.push(line);
    } else {
      prose.push(line);
    }
  });
  if (fence !== null) out.push(`<pre>${esc(fence.join("\n"))}</pre>`);
  flush();
  return out.join("");
}

async function ask() {
  const q = $("#q").value.trim();
  if (!q) return;
  $("#results").innerHTML = "";
  $("#answer").hidden = false;
  const box = $("#answer-text");
  box.className = "streaming";
  box.textContent = "";
  $("#sources").innerHTML = "";
  $("#answer-meta").textContent = "searching and reading…";
  say("");
  let res;
  try {
    res = await fetch("/api/ask", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify({ q, repo: repoParam() }),
    });
  } catch (e) { say(e.message); return; }
  if (!res.ok) {
    let msg = res.statusText;
    try { msg = (await res.json()).error; } catch (e) { /* keep statusText */ }
    say(msg); $("#answer-meta").textContent = ""; return;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const raw = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let kind = "message"; let data = "";
      raw.split("\n").forEach((line) => {
        if (line.startsWith("event: ")) kind = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      });
      onEvent(kind, data ? JSON.parse(data) : null);
    }
  }
}

function onEvent(kind, data) {
  const box = $("#answer-text");
  if (kind === "queued") $("#answer-meta").textContent = `waiting for ${data.ahead} earlier question(s)…`;
  else if (kind === "backend") $("#answer-meta").textContent = `${data.backend} · ${data.model} — generating…`;
  else if (kind === "token") box.textContent += data.text;
  else if (kind === "error") { say(data.error); $("#answer-meta").textContent = ""; }
  else if (kind === "answer") {
    const cites = {};
    data.citations.forEach((c) => { cites[c.n] = c; });
    box.className = "";
    box.innerHTML = renderMarkdown(data.answer, cites);
    const secs = ((data.timings_ms && data.timings_ms.total) || 0) / 1000;
    const absent = (data.not_in_code || []).length
      ? `not in the code base: ${data.not_in_code.join(", ")} (named in the question) · ` : "";
    $("#answer-meta").textContent = absent + (data.refused
      ? `answered from the index alone · ${secs.toFixed(1)} s`
      : `${data.backend} · ${data.model} · ${secs.toFixed(1)} s`);
    $("#sources").innerHTML = data.citations.length ? "<b>Sources</b><ol>" + data.citations.map((c) =>
      `<li value="${c.n}"><a class="cite" data-repo="${esc(c.repo || "")}" data-path="${esc(c.path)}" data-start="${c.start_line}" data-end="${c.end_line}">${esc(c.path)}:${c.start_line}-${c.end_line}</a> ${esc(c.symbol || "")}</li>`).join("") + "</ol>" : "";
  }
}

// ---------------------------------------------------------------------------------- status
async function showStatus() {
  const box = $("#status");
  box.hidden = false;
  box.textContent = "checking…";
  try {
    const data = await api("/api/status", { repo: "all" });
    box.innerHTML = `<table><tr><th>repository</th><th>files</th><th>chunks</th><th>commit</th><th>state</th><th>embedded</th><th></th></tr>` +
      data.repos.map((r) => {
        if (!r.indexed) return `<tr><td>${esc(r.name)}</td><td colspan="5">${esc(r.error)}</td><td><button class="refresh" data-repo="${esc(r.name)}">index</button></td></tr>`;
        const stale = r.stale ? '<span class="stale">stale</span>' : '<span class="fresh">up to date</span>';
        const share = r.embedded_share == null ? "—" : Math.round(r.embedded_share * 100) + "%";
        const btn = r.refreshing ? "refreshing…" : (r.stale ? `<button class="refresh" data-repo="${esc(r.name)}">refresh</button>` : "");
        return `<tr><td title="${esc(r.repo)}">${esc(r.name)}</td><td>${r.file_count}</td><td>${r.chunk_count}</td><td>${esc((r.commit || "—").slice(0, 10))}</td><td>${stale}</td><td>${share}</td><td>${btn}</td></tr>`;
      }).join("") + "</table>";
  } catch (e) { box.textContent = e.message; }
}

async function refresh(repo, button) {
  button.disabled = true;
  button.textContent = "refreshing…";
  try {
    const res = await fetch("/api/refresh", {
      method: "POST", headers: headers({ "Content-Type": "application/json" }), body: JSON.stringify({ repo }),
    });
    const data = await res.json();
    if (!res.ok) throw new Error(data.error);
    say(`re-indexed ${data.name}: ${data.summary.files_indexed} files changed`, true);
  } catch (e) { say(e.message); }
  showStatus();
  loadRepos();
}

// ---------------------------------------------------------------------------------- wiring
document.addEventListener("click", (ev) => {
  const a = ev.target.closest("a.hit-link, a.cite");
  if (a) {
    ev.preventDefault();
    openFile(a.dataset.repo, a.dataset.path, a.dataset.start, a.dataset.end);
    return;
  }
  const b = ev.target.closest("button.refresh");
  if (b) refresh(b.dataset.repo, b);
});
$("#search-form").addEventListener("submit", search);
$("#ask-btn").addEventListener("click", ask);
$("#status-btn").addEventListener("click", showStatus);
$("#viewer-close").addEventListener("click", () => { $("#viewer").hidden = true; });
if ($("#token")) {
  $("#token").value = sessionStorage.getItem("askrepo-token") || "";
  $("#token").addEventListener("change", () => { sessionStorage.setItem("askrepo-token", $("#token").value.trim()); loadRepos(); });
}
loadRepos().then(() => {
  const m = location.hash.match(/^#view=(.*)$/);
  if (m) {
    // repo|path|start|end, where the path itself may hold "|" (a file named a|b.py)
    const parts = decodeURIComponent(m[1]).split("|");
    const [s, e] = parts.splice(-2);
    const repo = parts.shift();
    openFile(repo, parts.join("|"), s, e);
  }
});
