// The console's shell: sign in, the namespaces the key reaches, the tabs; each view is a module.
import { ApiError, get, getKey, setKey } from "./api.js";
import { $, clear, el, initDialog, notice } from "./ui.js";
import * as ask from "./ask.js";
import * as why from "./why.js";
import * as documents from "./documents.js";
import * as overview from "./overview.js";

const NS = "terag.namespace";
const views = { ask, why, documents, overview };

// What every view reads: the chosen namespace, what the key reaches, and the latest retrieval.
export const ctx = {
  namespace: "",
  scope: { namespaces: [], write: false },
  retrieval: null,
  canWrite() {
    const s = this.scope;
    return !!this.namespace && s.write && (s.namespaces === null || s.namespaces.includes(this.namespace));
  },
  show(name) { selectTab(name); },
};

function selectTab(name, focus) {
  for (const key of Object.keys(views)) {
    const on = key === name;
    const tab = $("tab-" + key);
    tab.setAttribute("aria-selected", on ? "true" : "false");
    tab.tabIndex = on ? 0 : -1;
    $("view-" + key).hidden = !on;
    if (on && focus) tab.focus();
  }
  views[name].show(ctx);
}

function initTabs() {
  const names = Object.keys(views);
  for (const [i, name] of names.entries()) {
    const tab = $("tab-" + name);
    tab.addEventListener("click", () => selectTab(name));
    tab.addEventListener("keydown", (e) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
      if (step) {
        e.preventDefault();
        selectTab(names[(i + step + names.length) % names.length], true);
      }
    });
  }
}

function applyAccess() {
  const write = ctx.canWrite();
  document.body.classList.toggle("read-only", !write);
  for (const node of document.querySelectorAll(".write-only")) node.hidden = !write;
  $("access").textContent = ctx.namespace ? (write ? "read and write" : "read only") : "";
}

function chooseNamespace(name) {
  ctx.namespace = name;
  ctx.retrieval = null;
  sessionStorage.setItem(NS, name);
  applyAccess();
  for (const v of Object.values(views)) v.reset(ctx);
  const current = Object.keys(views).find((k) => !$("view-" + k).hidden) || "ask";
  selectTab(current);
}

async function enter(scope) {
  ctx.scope = scope;
  const namespaces = await get("/v1/namespaces");
  const select = clear($("namespace"));
  for (const n of namespaces) select.append(el("option", { value: n.name }, n.name));
  $("sign-in").hidden = true;
  $("workspace").hidden = false;
  $("session-controls").hidden = false;
  $("sign-out").hidden = !getKey();
  if (!namespaces.length) {
    notice("This key reaches no namespace yet: index documents with `terag index` or the API first.", "warn");
    select.append(el("option", { value: "" }, "(none)"));
    chooseNamespace("");
    return;
  }
  notice("");
  const names = namespaces.map((n) => n.name);
  const saved = sessionStorage.getItem(NS);
  chooseNamespace(names.includes(saved) ? saved : names[0]);
  select.value = ctx.namespace;
}

function showSignIn(message) {
  $("workspace").hidden = true;
  $("session-controls").hidden = true;
  $("sign-in").hidden = false;
  $("sign-in-error").textContent = message || "";
  $("api-key").value = "";
  $("api-key").focus();
}

async function start() {
  try {
    await enter(await get("/v1/key"));
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      const had = !!getKey();
      setKey("");
      showSignIn(had ? "The service refused the saved key: sign in again." : "");
    } else {
      showSignIn("The service did not answer: " + e.message);
    }
  }
}

function init() {
  initDialog();
  initTabs();
  for (const v of Object.values(views)) v.init(ctx);
  $("sign-in-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const key = $("api-key").value.trim();
    if (!key) return;
    setKey(key);
    try {
      await enter(await get("/v1/key"));
    } catch (err) {
      setKey("");
      showSignIn(err.status === 401 ? "That key is not one this service knows." : err.message);
    }
  });
  $("sign-out").addEventListener("click", () => {
    setKey("");
    sessionStorage.removeItem(NS);
    location.reload();
  });
  $("namespace").addEventListener("change", (e) => chooseNamespace(e.target.value));
  start();
}

init();
