// Overview: the namespace's counts, what it was built with, its most connected concepts and
// the state of its indexes (ingest runs, GDS projections in memory).
import { get, nsPath } from "./api.js";
import { $, clear, el, fmt, table } from "./ui.js";

async function load(ns, isCurrent) {
  const [s, more] = await Promise.all([get(nsPath(ns)), get(nsPath(ns, "overview") + "?limit=10")]);
  const top = more.top_concepts;
  if (!isCurrent()) return;
  table($("counts"), null, [
    ["passages", fmt(s.passages)], ["concepts", fmt(s.concepts)],
    ["named entities", fmt(s.entities)], ["concept → passage links", fmt(s.has_passage)],
    ["co-occurrence links", fmt(s.co_occurrence)], ["version", fmt(s.version)],
  ]);
  const runs = s.runs || [];
  const last = runs.length ? runs[runs.length - 1] : {};
  table($("built"), null, [
    ["extractor", s.extractor + (s.model ? ` (${s.model})` : "")],
    ["embedding model", more.embedding_model
      ? `${more.embedding_model}` + (more.embedding_dimensions ? `, ${more.embedding_dimensions} dimensions` : "") : "–"],
    ["created", s.created || "–"], ["updated", s.updated || "–"],
    ["indexing tokens", `${fmt(s.input_tokens)} in, ${fmt(s.output_tokens)} out` +
      (s.tokens_unknown ? ` (+${fmt(s.tokens_unknown)} extractions of unknown count)` : "")],
  ]);
  table($("top-concepts"), ["concept", "type", "passages", "co-occurring"],
    top.map((c) => [c.name, (c.entity ? "entity " : "") + (c.type || ""), fmt(c.passages), fmt(c.co_occurring)]));
  const rows = [["co-occurrence", s.cooccurrence === "lazy" ? "built on first query" : "kept up to date"],
    ["ingest runs", fmt(runs.length)], ["ingesting now", more.ingesting ? "yes" : "no"]];
  if (last.started) rows.push(["last run", `${last.started}` + (last.passages != null ? `, ${fmt(last.passages)} passages` : "")]);
  for (const p of s.projections || []) {
    rows.push(["GDS projection " + (p.name || ""), `${fmt(p.nodes ?? 0)} nodes, ${fmt(p.relationships ?? 0)} relationships` +
      (p.mb != null ? `, ${fmt(p.mb, 1)} MB` : "")]);
  }
  if (!(s.projections || []).length) rows.push(["GDS projection", "none in memory (made on the next query)"]);
  table($("index-state"), null, rows);
}

let current = "";

export function init() {}

export function show(ctx) {
  if (!ctx.namespace) return;
  const ns = ctx.namespace;
  current = ns;
  load(ns, () => current === ns && ctx.namespace === ns).catch((e) => {
    clear($("counts")).append(el("tr", {}, el("td", { class: "error" }, e.message)));
  });
}

export function reset() {
  current = "";
  for (const id of ["counts", "built", "top-concepts", "index-state"]) clear($(id));
}
