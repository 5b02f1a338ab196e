// Why: the retrieval as a graph. The question's linked concepts → the seed passages → the
// passages reached, each passage sized by its PageRank mass (its score). Selecting a concept adds
// its neighbourhood (the graph route's depth and node bounds); selecting a passage shows it.
import { get, nsPath, post } from "./api.js";
import { $, clear, el, fmt, provenanceRows } from "./ui.js";

const NEIGHBOURS = 30; // nodes per expansion: the graph route's max_nodes
let cy = null;
let nodes = new Map(); // id -> data, in the order they were added (the accessible list)
let loading = null;
let run = 0;

function loadCytoscape() {
  if (window.cytoscape) return Promise.resolve();
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = "/console/vendor/cytoscape.min.js";
      s.onload = () => resolve();
      s.onerror = () => reject(new Error("could not load the graph library"));
      document.head.append(s);
    });
  }
  return loading;
}

const STYLE = [
  { selector: "node", style: {
    label: "data(label)", "font-size": 10, "text-wrap": "ellipsis", "text-max-width": "140px",
    "text-valign": "bottom", "text-margin-y": 3, color: "#222", width: "data(size)", height: "data(size)",
  } },
  { selector: "node.concept", style: { "background-color": "#8DCC93", shape: "round-rectangle" } },
  { selector: "node.passage", style: { "background-color": "#4C8EDA" } },
  { selector: "node.seed", style: { "border-width": 4, "border-color": "#1d3f72" } },
  { selector: "node.neighbour", style: { opacity: 0.75 } },
  { selector: "node:selected", style: { "border-width": 4, "border-color": "#f5a623" } },
  { selector: "edge", style: { width: 1.5, "line-color": "#b5b5b5", "curve-style": "bezier",
    "target-arrow-shape": "triangle", "target-arrow-color": "#b5b5b5", "arrow-scale": 0.7 } },
  { selector: "edge.co", style: { "line-style": "dashed", "target-arrow-shape": "none" } },
];

function addNode(id, data, cls, pos) {
  if (nodes.has(id)) return false;
  nodes.set(id, { ...data, id, cls });
  cy.add({ group: "nodes", data: { id, label: data.label, size: data.size }, classes: cls, position: pos });
  return true;
}

function addEdge(source, target, cls) {
  const id = source + "->" + target;
  if (cy.getElementById(id).nonempty() || !nodes.has(source) || !nodes.has(target)) return;
  cy.add({ group: "edges", data: { id, source, target }, classes: cls || "" });
}

function renderList() {
  const ul = clear($("why-nodes"));
  for (const [id, n] of nodes) {
    const kind = n.kind === "concept" ? "Concept" : "Passage";
    const extra = n.kind === "concept" ? (n.weight != null ? " · weight " + fmt(n.weight, 3) : "")
      : (n.rank ? ` · rank ${n.rank} · score ${fmt(n.score)}` : "") + (n.seed ? " · seed" : "");
    ul.append(el("li", { class: n.cls },
      el("button", { type: "button", class: "link", "data-node": id, "data-kind": n.kind,
        onclick: () => select(id) }, `${kind}: ${n.label}${extra}`)));
  }
}

function detail(...children) {
  clear($("why-detail")).append(...children);
}

async function expand(id) {
  const n = nodes.get(id);
  const mine = run;
  detail(el("p", { class: "hint" }, `Expanding ${n.label}…`));
  try {
    const g = await get(nsPath(ctxNs, "graph") + "?" + new URLSearchParams({
      concept: n.name, depth: "1", max_nodes: String(NEIGHBOURS) }));
    if (mine !== run) return;
    const centre = cy.getElementById(id).position();
    const key = new Map();
    const fresh = g.nodes.filter((x) => {
      const k = x.label === "Concept" ? "c:" + x.name : "p:" + x.properties.passage_id;
      key.set(x.id, k);
      return !nodes.has(k);
    });
    fresh.forEach((x, i) => {
      const angle = (2 * Math.PI * i) / Math.max(1, fresh.length);
      const pos = { x: centre.x + 160 * Math.cos(angle), y: centre.y + 160 * Math.sin(angle) };
      const k = key.get(x.id);
      if (x.label === "Concept") addNode(k, { kind: "concept", label: x.name, name: x.name, size: 18 }, "concept neighbour", pos);
      else addNode(k, { kind: "passage", label: x.name, passage_id: x.properties.passage_id,
        doc_id: x.properties.doc_id, size: 16 }, "passage neighbour", pos);
    });
    for (const e of g.edges) {
      addEdge(key.get(e.source), key.get(e.target), e.type === "HAS_PASSAGE" ? "" : "co");
    }
    n.expanded = true;
    renderList();
    detail(el("p", {}, `${n.label}: ${fresh.length} new node(s) of ${g.nodes.length - 1} neighbour(s)` +
      (g.truncated ? ` (bounded at ${NEIGHBOURS} nodes)` : "") + "."));
  } catch (e) {
    detail(el("p", { class: "error" }, e.message));
  }
}

function showPassageDetail(n) {
  const p = n.passage || { id: n.passage_id, doc_id: n.doc_id, title: n.label };
  const dl = el("dl", { class: "meta" });
  for (const [k, v] of provenanceRows(p)) dl.append(el("dt", {}, k), el("dd", {}, v));
  if (n.rank) dl.append(el("dt", {}, "Rank"), el("dd", {}, String(n.rank)));
  if (n.seed) dl.append(el("dt", {}, "Seed weight"), el("dd", {}, fmt(n.seed, 4)));
  if (n.via && n.via.length) dl.append(el("dt", {}, "Linked by"), el("dd", {}, n.via.join(", ")));
  detail(el("h3", { id: "why-detail-title" }, p.title || p.doc_id), dl,
    p.text ? el("p", { class: "passage-text" }, p.text)
      : el("p", { class: "hint" }, "A passage of the neighbourhood: not in this question's top passages."));
}

function select(id) {
  const n = nodes.get(id);
  if (!n) return;
  cy.$(":selected").unselect();
  cy.getElementById(id).select();
  if (n.kind === "concept") expand(id);
  else showPassageDetail(n);
}

let ctxNs = "";

export async function explain(ctx, question) {
  question = (question || "").trim();
  if (!question || !ctx.namespace) return;
  $("why-question").value = question;
  ctxNs = ctx.namespace;
  const mine = ++run;
  detail(el("p", { class: "hint" }, "Retrieving and explaining…"));
  await loadCytoscape();
  ensureGraph();
  cy.elements().remove();
  nodes = new Map();
  clear($("why-nodes"));
  const topK = ctx.retrieval && ctx.retrieval.question === question ? ctx.retrieval.topK : 5;
  try {
    const r = await post(nsPath(ctx.namespace, "retrieve"), { question, top_k: topK });
    const whys = await Promise.all(r.passages.map((p) => get(
      nsPath(ctx.namespace, "passages/" + encodeURIComponent(p.id) + "/why") + "?" +
      new URLSearchParams({ question, top_k: String(topK) }))));
    if (mine !== run) return;
    const maxW = Math.max(1e-9, ...r.matches.map((m) => m.weight));
    const maxS = Math.max(1e-9, ...r.passages.map((p) => p.score));
    r.matches.forEach((m, i) => addNode("c:" + m.name, {
      kind: "concept", label: m.name, name: m.name, weight: m.weight, size: 18 + 22 * (m.weight / maxW),
    }, "concept", { x: 0, y: i * 70 }));
    const seeds = [], reached = [];
    r.passages.forEach((p, i) => (whys[i].seed_weight > 0 ? seeds : reached).push([p, whys[i], i]));
    for (const [col, list] of [[1, seeds], [2, reached]]) {
      list.forEach(([p, w, i], row) => addNode("p:" + p.id, {
        kind: "passage", label: `[${i + 1}] ${p.title || p.doc_id}`, passage: p, passage_id: p.id,
        rank: i + 1, score: p.score, seed: w.seed_weight, via: w.concepts.map((c) => c.name),
        size: 16 + 34 * Math.sqrt(p.score / maxS),
      }, "passage" + (w.seed_weight > 0 ? " seed" : ""), { x: col * 260, y: row * 80 }));
    }
    r.passages.forEach((p, i) => {
      for (const c of whys[i].concepts) addEdge("c:" + c.name, "p:" + p.id);
    });
    cy.fit(undefined, 30);
    renderList();
    detail(el("p", { class: "hint" }, `${r.matches.length} linked concept(s), ${seeds.length} seed passage(s), ` +
      `${r.passages.length} passage(s) reached (${r.mode}).`));
  } catch (e) {
    detail(el("p", { class: "error" }, e.message));
  }
}

function ensureGraph() {
  if (cy) { cy.resize(); return; }
  cy = window.cytoscape({
    container: $("why-graph"), style: STYLE, layout: { name: "preset" },
    wheelSensitivity: 0.3, minZoom: 0.2, maxZoom: 3,
  });
  cy.on("tap", "node", (e) => select(e.target.id()));
}

export function init(ctx) {
  $("why-form").addEventListener("submit", (e) => {
    e.preventDefault();
    explain(ctx, $("why-question").value);
  });
}

export function show() {
  if (cy) cy.resize();
}

export function reset() {
  run++;
  nodes = new Map();
  if (cy) cy.elements().remove();
  clear($("why-nodes"));
  clear($("why-detail"));
}
