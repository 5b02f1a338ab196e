// Small DOM helpers and the passage dialog (text and provenance), shared by the views.

// An element with attributes (on* keys become listeners) and children (strings become text).
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function $(id) {
  return document.getElementById(id);
}

export function fmt(n, digits = 4) {
  if (n === null || n === undefined) return "–";
  if (typeof n !== "number") return String(n);
  return Number.isInteger(n) ? n.toLocaleString("en") : n.toFixed(digits);
}

export function table(node, head, rows) {
  clear(node);
  if (head) node.append(el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))));
  const body = el("tbody");
  for (const r of rows) body.append(el("tr", {}, r.map((c) => el("td", {}, c))));
  node.append(body);
  return node;
}

// The file, page and section a passage's provenance names, as label/value pairs.
export function provenanceRows(p) {
  const prov = p.provenance || {};
  const rows = [["File", prov.source || p.doc_id || "–"]];
  if (p.doc_id && p.doc_id !== prov.source) rows.push(["Document", p.doc_id]);
  if (prov.page_start != null) {
    const pages = prov.page_end != null && prov.page_end !== prov.page_start
      ? prov.page_start + "–" + prov.page_end : String(prov.page_start);
    rows.push(["Page", pages]);
  }
  if (prov.heading_path && prov.heading_path.length) rows.push(["Section", prov.heading_path.join(" › ")]);
  if (prov.char_start != null) rows.push(["Characters", prov.char_start + "–" + prov.char_end]);
  if (p.id) rows.push(["Passage", p.id]);
  if (p.score != null) rows.push(["Score", fmt(p.score)]);
  return rows;
}

let lastFocus = null;

export function showPassage(p, heading) {
  const dlg = $("passage-dialog");
  $("passage-title").textContent = heading || p.title || p.doc_id || "Passage";
  const meta = clear($("passage-meta"));
  for (const [k, v] of provenanceRows(p)) meta.append(el("dt", {}, k), el("dd", {}, v));
  $("passage-text").textContent = p.text || "";
  lastFocus = document.activeElement;
  if (!dlg.open) dlg.showModal();
  $("passage-close").focus();
}

export function initDialog() {
  const dlg = $("passage-dialog");
  $("passage-close").addEventListener("click", () => dlg.close());
  dlg.addEventListener("close", () => { if (lastFocus) lastFocus.focus(); });
}

export function notice(text, kind) {
  const n = $("notice");
  n.textContent = text || "";
  n.className = "notice " + (kind || "");
  n.hidden = !text;
}
