// Why: the retrieval as a graph. The walk's strongest paths to each returned passage (from the
// question's linked concepts and the seed passages, over the bridges between), each returned
// passage sized by its PageRank mass (its score). Selecting a concept adds
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
  { selector: "node.concept.question", style: { "background-color": "#4CAF50" } },
  { selector: "node.concept.bridge", style: { "background-color": "#C5E8C8" } },
  { selector: "node.passage.bridge", style: { "background-color": "#A9C8EE" } },
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
    const role = n.role === "bridge" ? " · bridge" : "";
    ul.append(el("li", { class: n.cls },
      el("button", { type: "button", class: "link", "data-node": id, "data-kind": n.kind,
        "data-role": n.role || "neighbour", "data-seed": n.seed > 0 ? "1" : "0",
        onclick: () => select(id) }, `${kind}: ${n.label}${extra}${role}`)));
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
  if (n.paths && n.paths.length) {
    dl.append(el("dt", {}, "The walk's paths"),
      el("dd", {}, el("ol", { class: "paths" }, n.paths.map((x) => el("li", {}, pathText(x))))));
  }
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

// A step's node: concepts by name (as the neighbourhood route names them), passages by id.
function stepKey(step) {
  return (step.kind === "concept" ? "c:" : "p:") + (step.kind === "concept" ? step.name : step.id);
}

function pathText(path) {
  return path.steps.map((s, i) => (i ? (s.rel === "CO_OCCURRENCE" ? " ~ " : " → ") : "") +
    (s.kind === "concept" ? s.name : `“${s.name}”`)).join("") + ` (${fmt(path.strength, 4)})`;
}

// The walk's paths to each returned passage, in columns by how many steps a node is from the
// passage it leads to: the question's concepts and the seeds on the left, the bridges between,
// the returned passages on the right. Every node counted in the summary is one drawn.
function draw(r, whys) {
  const maxW = Math.max(1e-9, ...r.matches.map((m) => m.weight));
  const maxS = Math.max(1e-9, ...r.passages.map((p) => p.score));
  const returned = new Map(r.passages.map((p, i) => ["p:" + p.id, [p, whys[i], i]]));
  const column = new Map(); // key -> column (0: farthest from a returned passage)
  const info = new Map(); // key -> the step that first named it, and its roles
  const place = (key, col) => column.set(key, Math.min(column.has(key) ? column.get(key) : col, col));
  for (const m of r.matches) place("c:" + m.name, 0);
  whys.forEach((w) => {
    for (const path of w.paths) {
      path.steps.forEach((s, i) => {
        const key = stepKey(s);
        const n = info.get(key) || { step: s, roles: new Set(), weight: 0 };
        n.roles.add(s.role);
        if (s.role === "seed") n.weight = s.weight;
        info.set(key, n);
        if (!returned.has(key)) place(key, 4 - (path.steps.length - 1 - i));
      });
    }
  });
  const rows = [0, 0, 0, 0, 0];
  const at = (col) => ({ x: col * 220, y: rows[col]++ * 70 });
  for (const m of r.matches) {
    addNode("c:" + m.name, { kind: "concept", label: m.name, name: m.name, weight: m.weight,
      role: "question", size: 18 + 22 * (m.weight / maxW) }, "concept question", at(column.get("c:" + m.name)));
  }
  const cols = [...column.entries()].filter(([k]) => !nodes.has(k) && !returned.has(k)).sort((a, b) => a[1] - b[1]);
  for (const [key, col] of cols) {
    const { step, roles, weight } = info.get(key);
    const seed = roles.has("seed");
    if (step.kind === "concept") {
      addNode(key, { kind: "concept", label: step.name, name: step.name, role: "bridge", size: 16 },
        "concept bridge", at(col));
    } else {
      addNode(key, { kind: "passage", label: step.name, passage_id: step.id, role: seed ? "seed" : "bridge",
        seed: seed ? weight : 0, size: 14 }, "passage " + (seed ? "seed" : "bridge"), at(col));
    }
  }
  for (const [key, [p, w, i]] of returned) {
    const seed = w.seed_weight > 0;
    addNode(key, {
      kind: "passage", label: `[${i + 1}] ${p.title || p.doc_id}`, passage: p, passage_id: p.id,
      rank: i + 1, score: p.score, seed: w.seed_weight, role: "returned", via: w.concepts.map((c) => c.name),
      paths: w.paths, size: 16 + 34 * Math.sqrt(p.score / maxS),
    }, "passage returned" + (seed ? " seed" : ""), at(4));
  }
  for (const w of whys) {
    for (const path of w.paths) {
      for (let i = 1; i < path.steps.length; i++) {
        addEdge(stepKey(path.steps[i - 1]), stepKey(path.steps[i]), path.steps[i].rel === "CO_OCCURRENCE" ? "co" : "");
      }
    }
  }
  cy.fit(undefined, 30);
  renderList();
  const drawn = [...nodes.values()];
  const count = (f) => drawn.filter(f).length;
  const left = whys.reduce((a, w) => a + w.paths_left_out, 0);
  const summary = el("p", { class: "hint", id: "why-summary" },
    `${count((n) => n.role === "question")} linked concept(s), ` +
    `${count((n) => n.role === "seed" || (n.role === "returned" && n.seed > 0))} seed passage(s), ` +
    `${count((n) => n.role === "bridge")} bridge node(s), ${returned.size} passage(s) reached (${r.mode}). ` +
    "Edges follow the walk: solid HAS_PASSAGE, dashed CO_OCCURRENCE." +
    (left ? ` ${left} weaker path(s) not drawn (each passage shows its strongest).` : ""));
  detail(summary);
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
    draw(r, whys);
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
