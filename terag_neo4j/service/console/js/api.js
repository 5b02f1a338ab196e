// The service's HTTP API, with the signed-in key as a header (never in a URL).
const KEY = "terag.key";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function getKey() {
  return sessionStorage.getItem(KEY) || "";
}

export function setKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

function headers(extra) {
  const h = new Headers(extra || {});
  const key = getKey();
  if (key) h.set("Authorization", "Bearer " + key);
  return h;
}

async function failure(res) {
  let message = res.status + " " + res.statusText;
  try {
    const body = await res.json();
    if (body && body.error) message = body.error.message;
    else if (body && body.detail) message = JSON.stringify(body.detail);
  } catch (_) { /* not JSON */ }
  return new ApiError(res.status, message);
}

export async function call(method, path, body, opts = {}) {
  const init = { method, headers: headers(), credentials: "omit", cache: "no-store" };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.headers.set("Content-Type", "application/json");
    init.body = JSON.stringify(body);
  }
  if (opts.signal) init.signal = opts.signal;
  const res = await fetch(path, init);
  if (!res.ok) throw await failure(res);
  if (opts.raw) return res;
  if (res.status === 204) return null;
  return res.json();
}

export const get = (path, opts) => call("GET", path, undefined, opts);
export const post = (path, body, opts) => call("POST", path, body, opts);
export const del = (path, opts) => call("DELETE", path, undefined, opts);

export function nsPath(namespace, tail) {
  return "/v1/namespaces/" + encodeURIComponent(namespace) + (tail ? "/" + tail : "");
}

// NDJSON lines of a streamed response, each parsed, handed to onEvent as they arrive.
export async function stream(path, body, onEvent, signal) {
  const res = await call("POST", path, body, { raw: true, signal });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (line) onEvent(JSON.parse(line));
    }
  }
  if (buffer.trim()) onEvent(JSON.parse(buffer));
}
