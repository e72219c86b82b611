// Signing in: a user name and password, or a sign-in link (#login=TOKEN).
import { api, h, show, signIn } from "./lib.js";

export function loginView(message) {
  const error = h("p", { class: "error", "data-testid": "login-error" }, message || "");
  const form = h("form", { class: "card stack", "data-testid": "login" },
    h("h1", {}, "Sign in"),
    h("input", { name: "username", placeholder: "Username", autocomplete: "username", required: true }),
    h("input", { name: "password", type: "password", placeholder: "Password",
      autocomplete: "current-password", required: true }),
    h("button", { type: "submit" }, "Sign in"), error);
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const data = new FormData(form);
    try {
      const answer = await api("POST", "/auth/login",
        { username: data.get("username"), password: data.get("password") });
      signIn(answer.token);
    } catch (failure) { error.textContent = failure.message; }
  });
  show(form);
}
