// Ask: a streamed answer with numbered citations, the top passages with their scores, the
// linked concepts, and the tokens and time each stage spent.
import { ApiError, nsPath, post, stream } from "./api.js";
import { $, clear, el, fmt, showPassage, table } from "./ui.js";
import * as why from "./why.js";

let controller = null;
let passages = [];

function snippet(text, n = 220) {
  return text.length > n ? text.slice(0, n) + "…" : text;
}

function renderPassages(list) {
  passages = list;
  const ol = clear($("passages"));
  list.forEach((p, i) => {
    const title = p.title || p.doc_id;
    ol.append(el("li", { class: "passage" },
      el("div", { class: "passage-head" },
        el("button", {
          type: "button", class: "link", "data-passage": p.id,
          "aria-label": `Open passage ${i + 1}: ${title}`,
          onclick: () => showPassage(p, `[${i + 1}] ${title}`),
        }, `[${i + 1}] ${title}`),
        el("span", { class: "score", title: "score" }, fmt(p.score))),
      el("p", { class: "snippet" }, snippet(p.text))));
  });
}

function renderAnswer(text, citations) {
  const box = clear($("answer"));
  const byMarker = new Map((citations || []).map((c) => [c.marker, c]));
  for (const part of text.split(/(\[\d+\])/)) {
    const m = /^\[(\d+)\]$/.exec(part);
    const c = m && byMarker.get(Number(m[1]));
    const p = c && passages.find((x) => x.id === c.passage_id);
    if (p) {
      const title = p.title || p.doc_id;
      box.append(el("button", {
        type: "button", class: "cite", "data-marker": m[1], "data-passage": p.id,
        "aria-label": `Citation ${m[1]}: ${title}`,
        onclick: () => showPassage(p, `[${m[1]}] ${title}`),
      }, part));
    } else box.append(part);
  }
}

// null: the LLM server sent no count; shown as unknown, never as 0
const tokens = (n) => (n === null || n === undefined ? "unknown" : fmt(n));

function renderRetrieval(r, reader) {
  const ul = clear($("concepts"));
  // A name can match as an entity and as a concept: one chip, its strongest match
  const named = new Map();
  for (const m of r.matches || []) if (!named.has(m.name) || named.get(m.name).weight < m.weight) named.set(m.name, m);
  for (const m of named.values()) {
    ul.append(el("li", { class: "chip", title: `${m.match} match, weight ${fmt(m.weight)}` },
      m.name, el("span", { class: "hint" }, " " + fmt(m.weight, 3))));
  }
  if (!(r.matches || []).length) ul.append(el("li", { class: "hint" }, "none linked: " + (r.fallback_reason || r.mode)));
  const rows = Object.entries(r.timings || {}).map(([k, s]) => [k, (s * 1000).toFixed(1) + " ms", "", ""]);
  rows.push(["query concepts (LLM)", "", tokens(r.input_tokens), tokens(r.output_tokens)]);
  if (reader) rows.push(["reader (LLM)", "", tokens(reader.input_tokens), tokens(reader.output_tokens)]);
  table($("stages"), ["stage", "time", "tokens in", "tokens out"], rows);
}

function status(text) {
  $("ask-status").textContent = text;
}

function remember(ctx, question, topK, list) {
  ctx.retrieval = { question, topK, passages: list };
  $("why-answer").hidden = !list.length;
}

async function run(ctx, withReader) {
  const question = $("question").value.trim();
  if (!question || !ctx.namespace) return;
  const topK = Math.max(1, Math.min(100, Number($("top-k").value) || 5));
  if (controller) controller.abort();
  controller = new AbortController();
  clear($("answer"));
  clear($("passages"));
  clear($("concepts"));
  clear($("stages"));
  $("why-answer").hidden = true;
  const started = performance.now();
  try {
    if (!withReader) {
      status("Retrieving…");
      const r = await post(nsPath(ctx.namespace, "retrieve"), { question, top_k: topK }, { signal: controller.signal });
      renderPassages(r.passages);
      renderRetrieval(r, null);
      remember(ctx, question, topK, r.passages);
      status(`Retrieved in ${Math.round(performance.now() - started)} ms (${r.mode}).`);
      return;
    }
    status("Retrieving…");
    let text = "";
    await stream(nsPath(ctx.namespace, "ask"), { question, top_k: topK, stream: true }, (ev) => {
      if (ev.event === "passages") {
        renderPassages(ev.passages);
        remember(ctx, question, topK, ev.passages);
        status("Reading…");
      } else if (ev.event === "token") {
        text += ev.text;
        $("answer").textContent = text;
      } else if (ev.event === "answer") {
        renderAnswer(ev.answer, ev.citations);
      } else if (ev.event === "done") {
        renderAnswer(ev.answer, ev.citations);
        renderRetrieval(ev.retrieval, ev);
        status(`Answered in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
      } else if (ev.event === "error") {
        // 503: the reader is not there yet (a first run's Ollama build says how far it is)
        status((ev.status === 503 ? "No answer yet, the passages are above: " : "The reader failed: ") + ev.error.message);
      }
    }, controller.signal);
  } catch (e) {
    if (e.name === "AbortError") return;
    status((e instanceof ApiError ? "" : "Failed: ") + e.message);
  }
}

export function init(ctx) {
  $("ask-form").addEventListener("submit", (e) => { e.preventDefault(); run(ctx, true); });
  $("retrieve-button").addEventListener("click", () => {
    if ($("ask-form").reportValidity()) run(ctx, false);
  });
  $("why-answer").addEventListener("click", () => {
    ctx.show("why");
    why.explain(ctx, ctx.retrieval.question);
  });
}

export function show() {}

export function reset(ctx) {
  if (controller) controller.abort();
  passages = [];
  for (const id of ["answer", "passages", "concepts", "stages"]) clear($(id));
  status("");
  $("why-answer").hidden = true;
  ctx.retrieval = null;
}
