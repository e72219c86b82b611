// Signing in when a link did not work, and setting a password once signed in.
import { API, api, h, signIn } from "./lib.js";

// Why a sign-in link did not work, and the ways in that remain.
export function linkHelp(message) {
  return h("section", { class: "card stack", "data-testid": "link-failed" },
    h("h2", {}, "This sign-in link did not work"),
    h("p", {}, message),
    h("p", { class: "muted" }, "A link works once, for 24 hours. Sign in below with your username and password, " +
      "or with an API token. To get a token, ask an admin, or run `helix tokens create --user NAME` " +
      "on the server's machine (an admin sets a password with `helix users passwd NAME --password-stdin`)."),
    tokenForm());
}

function tokenForm() {
  const error = h("p", { class: "error", "data-testid": "token-error" });
  const form = h("form", { class: "row", "data-testid": "token-login" },
    h("input", { name: "token", type: "password", placeholder: "API token", "aria-label": "API token",
      autocomplete: "off", required: true }),
    h("button", { type: "submit", class: "secondary" }, "Sign in with a token"), error);
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const token = form.elements.token.value.trim();
    const answer = await fetch(`${API}/me`, { headers: { Authorization: `Bearer ${token}` } });
    if (answer.ok) signIn(token);
    else error.textContent = "this token is not valid (revoked, or mistyped)";
  });
  return form;
}

// For a user without a password (one who came in by a link): set one now.
export function passwordCard() {
  const error = h("p", { class: "error", "data-testid": "password-error" });
  const form = h("form", { class: "card stack", "data-testid": "set-password" },
    h("h2", {}, "Set your password"),
    h("p", { class: "muted" }, "You signed in with a link and have no password yet: set one to sign in again later."),
    h("input", { name: "password", type: "password", placeholder: "New password (8 characters or more)",
      autocomplete: "new-password", minlength: 8, required: true, "aria-label": "New password" }),
    h("input", { name: "again", type: "password", placeholder: "The same again",
      autocomplete: "new-password", required: true, "aria-label": "New password again" }),
    h("button", { type: "submit" }, "Set password"), error);
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const { password, again } = form.elements;
    if (password.value !== again.value) { error.textContent = "the two passwords differ"; return; }
    try {
      const answer = await api("POST", "/me/password", { password: password.value });
      signIn(answer.token, false);
      form.replaceChildren(h("p", { "data-testid": "password-set" }, "Your password is set."));
    } catch (failure) { error.textContent = failure.message; }
  });
  return form;
}
