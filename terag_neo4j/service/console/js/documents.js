// Documents: upload files and folders (drag and drop or pickers) as ingest jobs, follow the
// jobs live and cancel them, list the namespace's documents, delete and re-index them.
import { del, get, nsPath, post } from "./api.js";
import { $, clear, el, fmt, notice, table } from "./ui.js";

// The suffixes the service reads (indexing/readers/detect.py; a unit test keeps them equal)
const SUFFIXES = [".docx", ".htm", ".html", ".jsonl", ".markdown", ".md", ".ndjson", ".pdf", ".txt", ".xhtml"];
const FINISHED = new Set(["succeeded", "failed", "cancelled"]);
const PAGE = 50;
let jobs = new Map(); // id -> job, this namespace's
let timer = null;
let offset = 0;
let context = null;

function supported(name) {
  const lower = name.toLowerCase();
  return SUFFIXES.some((s) => lower.endsWith(s));
}

// Every file under the dropped items, folders walked (the browser hands them as entries).
async function droppedFiles(items) {
  const out = [];
  async function walk(entry) {
    if (!entry) return;
    if (entry.isFile) {
      out.push(await new Promise((res, rej) => entry.file(res, rej)));
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
        if (!batch.length) break;
        for (const e of batch) await walk(e);
      }
    }
  }
  const entries = [...items].map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
  if (entries.some((e) => e)) for (const e of entries) await walk(e);
  return out;
}

async function upload(files, renameTo) {
  const ctx = context;
  const chosen = [...files].filter((f) => supported(f.name));
  const skipped = files.length - chosen.length;
  if (!chosen.length) {
    notice(`Nothing to upload: ${files.length} file(s), none of a supported type (${SUFFIXES.join(", ")}).`, "warn");
    return;
  }
  const form = new FormData();
  for (const f of chosen) form.append("files", f, renameTo || f.name);
  notice(`Uploading ${chosen.length} file(s)…` + (skipped ? ` (${skipped} of an unsupported type skipped)` : ""));
  try {
    const job = await post(nsPath(ctx.namespace, "documents/upload"), form);
    jobs.set(job.id, job);
    notice(`Job ${job.id} queued: ${job.documents_total} document(s)` +
      (skipped ? `; ${skipped} file(s) of an unsupported type skipped.` : "."));
    renderJobs();
    poll();
  } catch (e) {
    notice("Upload refused: " + e.message, "error");
  }
}

function renderJobs() {
  const write = context.canWrite();
  const list = [...jobs.values()].sort((a, b) => (a.created < b.created ? 1 : -1)).slice(0, 20);
  const rows = list.map((j) => {
    const pct = j.passages_total ? Math.round((100 * j.passages_done) / j.passages_total) : 0;
    const bar = el("progress", { max: String(Math.max(1, j.passages_total)), value: String(j.passages_done),
      "aria-label": `job ${j.id} progress` }, pct + "%");
    const errors = j.errors.length
      ? el("ul", { class: "errors" }, j.errors.map((e) => el("li", {}, e))) : "";
    const cancel = write && !FINISHED.has(j.state)
      ? el("button", { type: "button", class: "secondary", "data-cancel": j.id,
        "aria-label": `Cancel job ${j.id}`, onclick: () => cancelJob(j.id) }, "Cancel") : "";
    return [
      el("code", {}, j.id),
      el("span", { class: "state state-" + j.state, "data-job-state": j.id }, j.state),
      el("span", {}, bar, ` ${fmt(j.passages_done)} / ${fmt(j.passages_total)} passages, ` +
        `${j.documents_done} / ${j.documents_total} documents` +
        (j.document ? `, now ${j.document}` : "")),
      errors,
      cancel,
    ];
  });
  table($("jobs"), ["job", "state", "progress", "errors", ""], rows.length ? rows : [["no jobs yet", "", "", "", ""]]);
}

async function cancelJob(id) {
  try {
    const j = await del("/v1/jobs/" + encodeURIComponent(id));
    jobs.set(j.id, j);
    renderJobs();
    poll();
  } catch (e) {
    notice("Cancel refused: " + e.message, "error");
  }
}

function poll() {
  if (timer) return;
  timer = setTimeout(async () => {
    timer = null;
    const ns = context.namespace;
    const open = [...jobs.values()].filter((j) => !FINISHED.has(j.state));
    let finished = false;
    for (const j of open) {
      try {
        const now = await get("/v1/jobs/" + encodeURIComponent(j.id));
        if (ns !== context.namespace) return;
        if (FINISHED.has(now.state)) {
          finished = true;
          notice(`Job ${now.id} ${now.state}: ${now.passages_done} passage(s) of ${now.documents_done} document(s)` +
            (now.errors.length ? `, ${now.errors.length} error(s)` : "") + ".", now.state === "succeeded" ? "" : "warn");
        }
        jobs.set(now.id, now);
      } catch (_) { /* the next poll tries again */ }
    }
    renderJobs();
    if (finished) loadDocuments();
    if ([...jobs.values()].some((j) => !FINISHED.has(j.state))) poll();
  }, 1000);
}

async function loadJobs() {
  const ns = context.namespace;
  const all = await get("/v1/jobs");
  if (ns !== context.namespace) return;
  jobs = new Map(all.filter((j) => j.namespace === ns).map((j) => [j.id, j]));
  renderJobs();
  poll();
}

async function removeDocument(id) {
  if (!confirm(`Delete document ${id} and its passages from ${context.namespace}?`)) return;
  try {
    const d = await del(nsPath(context.namespace, "documents/" + encodeURIComponent(id)));
    notice(`Deleted ${d.document}: ${d.passages} passage(s).`);
    loadDocuments();
  } catch (e) {
    notice("Delete refused: " + e.message, "error");
  }
}

let reindexId = null;

function reindex(id) {
  reindexId = id;
  $("reindex-input").click();
}

async function loadDocuments() {
  const ctx = context;
  if (!ctx.namespace) return;
  const ns = ctx.namespace;
  const write = ctx.canWrite();
  try {
    const res = await get(nsPath(ns, "documents") + `?offset=${offset}&limit=${PAGE}`);
    if (ns !== context.namespace) return;
    $("documents-total").textContent = `(${fmt(res.total)})`;
    const rows = res.documents.map((d) => [
      el("span", { "data-document": d.id }, d.id),
      d.title,
      el("span", { class: "hint" }, (d.source || "–") + (d.pages ? ` · ${d.pages} pages` : "")),
      fmt(d.passages),
      write ? el("span", { class: "actions" },
        // A file upload's id is its name: re-indexing sends a new file under that name
        d.id.includes("/") ? "" : el("button", { type: "button", class: "secondary",
          "aria-label": `Re-index ${d.id} from a file`, onclick: () => reindex(d.id) }, "Re-index…"),
        el("button", { type: "button", class: "danger", "aria-label": `Delete ${d.id}`,
          onclick: () => removeDocument(d.id) }, "Delete")) : "",
    ]);
    table($("documents"), ["document", "title", "read from", "passages", ""], rows);
    const nav = [];
    if (offset > 0) nav.push(el("button", { type: "button", class: "secondary", onclick: () => { offset = Math.max(0, offset - PAGE); loadDocuments(); } }, "Previous"));
    if (offset + PAGE < res.total) nav.push(el("button", { type: "button", class: "secondary", onclick: () => { offset += PAGE; loadDocuments(); } }, "Next"));
    if (nav.length) $("documents").append(el("caption", { class: "pager" }, nav));
  } catch (e) {
    table($("documents"), null, [[e.message]]);
  }
}

export function init(ctx) {
  context = ctx;
  const zone = $("drop-zone");
  zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", async (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    const files = await droppedFiles(e.dataTransfer.items || []);
    upload(files.length ? files : [...e.dataTransfer.files]);
  });
  zone.addEventListener("click", () => $("file-input").click());
  zone.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); $("file-input").click(); }
  });
  for (const id of ["file-input", "folder-input"]) {
    $(id).addEventListener("change", (e) => {
      const files = [...e.target.files];
      e.target.value = "";
      if (files.length) upload(files);
    });
  }
  $("reindex-input").addEventListener("change", (e) => {
    const f = e.target.files[0];
    e.target.value = "";
    if (f && reindexId) upload([f], reindexId);
  });
}

export function show(ctx) {
  if (!ctx.namespace) return;
  loadJobs().catch((e) => notice(e.message, "error"));
  loadDocuments();
}

export function reset() {
  jobs = new Map();
  offset = 0;
  if (timer) { clearTimeout(timer); timer = null; }
  clear($("jobs"));
  clear($("documents"));
}
