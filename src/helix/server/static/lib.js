// What every page of the dashboard shares: the API (the token, errors), elements, the socket.
// Plain ES modules, no build step. The dashboard speaks the public API only.

export const API = "/api/v1";
const view = document.getElementById("view");

// The signed-in session: the token (kept across reloads) and the page's live connection.
export const session = {
  token: localStorage.getItem("helix.token"),
  closeLive: () => {},
};

export class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

// Every call goes through here: the token, and the error body turned into an ApiError.
export async function request(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  const answer = await fetch(API + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!answer.ok) {
    const data = await answer.json().catch(() => ({}));
    const error = data.error || { code: "error", message: answer.statusText };
    if (answer.status === 401 && session.token && !path.startsWith("/auth/")) signOut();
    throw new ApiError(answer.status, error.code, error.message);
  }
  return answer;
}

export const api = async (method, path, body) =>
  (await request(method, path, body)).json().catch(() => ({}));

// Answers that are not JSON (a file's bytes, a diff), as text.
export const apiText = async (path) => (await request("GET", path)).text();

// Elements are built with textContent only: event data never becomes markup.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "style") el.style.cssText = value; // the CSP refuses style attributes
    else if (value === true) el.setAttribute(key, "");
    else if (value !== false && value != null) el.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child != null) el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export const money = (usd) => (usd == null ? "—" : `$${Number(usd).toFixed(4)}`);
// What a budget.exceeded says: which budget (the run's own, or workspace:W's month…), which cap.
export function budgetWords(d) {
  const amount = d.cap_tokens != null ? `${d.spent_tokens || 0} of ${d.cap_tokens} tokens`
    : `${money(d.spent_usd)} spent of ${money(d.cap_usd)}`;
  if (d.scope == null) return amount;
  return `${d.scope === "run" ? "the run's own cap" : `${d.scope}'s ${d.period} budget`}: ${amount}`;
}
export const badge = (status) => h("span", { class: `status ${status}`, "data-testid": "status" }, status);
export const show = (...nodes) => view.replaceChildren(...nodes);

export function signIn(newToken, go = true) {
  session.token = newToken;
  localStorage.setItem("helix.token", newToken);
  if (go) location.hash = "#/";
}

export function signOut() {
  session.token = null;
  localStorage.removeItem("helix.token");
  document.getElementById("who").textContent = "";
  document.getElementById("logout").hidden = true;
  document.getElementById("nav-nodes").hidden = true;
  location.hash = "#/login";
}

// A WebSocket on the API, authorised by a one-use token; events (JSON) to onEvent.
export async function socket(path, params, onEvent, onClose) {
  const { token: wsToken } = await api("POST", "/auth/ws-token");
  const query = new URLSearchParams({ token: wsToken, ...params });
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}${API}${path}?${query}`);
  ws.onmessage = (message) => onEvent(JSON.parse(message.data));
  ws.onclose = (closed) => onClose && onClose(closed);
  return ws;
}
