// Signing in: a one-time link's token or a pasted key is exchanged for an HttpOnly session cookie
// (the page never keeps the key); signing out ends the session and forgets what was shown.

import {newConversation} from "./ask.js";
import {restoreConversations} from "./conversations.js";
import {$} from "./dom.js";
import {showConnectExtension} from "./extension.js";
import {ApiError, errorText} from "./http.js";
import {clearSources, loadSources, stopAllStreams} from "./sources.js";
import {state} from "./state.js";
import {plainError} from "./words.js";

export async function whoAmI() {
  const res = await fetch("/v1/me");
  if (res.status === 401 || res.status === 403) {
    const message = await errorText(res);
    showKeyPath(message);
    return {ok: false, message: plainError(message)};
  }
  if (!res.ok) throw new ApiError(res.status, await errorText(res));
  return {ok: true, me: await res.json()};
}

// Exchange a one-time link's token or a pasted key for the session cookie.
// The server's answer names where this machine's key is (it differs with --data-dir): the help
// says that place rather than a general one.
function showKeyPath(message) {
  const found = /key (?:is )?in (\S+api-key)\b/.exec(message);
  if (found) $("#key-path").textContent = found[1];
}

export async function openSession({token = null, key = null, remember = false}) {
  const headers = {"Content-Type": "application/json"};
  if (key) headers.Authorization = `Bearer ${key}`;
  const res = await fetch("/v1/session", {method: "POST", headers, body: JSON.stringify({token, remember})});
  if (!res.ok) return {ok: false, message: plainError(await errorText(res))};
  return {ok: true};
}

export function showSignIn(message = "") {
  stopAllStreams();
  $("#main").hidden = true;
  $("#sections").hidden = true;
  $("#signin").hidden = false;
  $("#signout").hidden = true;
  $("#who").textContent = "";
  $("#signin-error").textContent = message;
  $("#key").value = "";
  $("#key").focus();
}

// Any API call answered 401: the session is gone.
export function sessionEnded() {
  showSignIn("Your sign-in has ended (signed out elsewhere, expired, or its key was revoked). Sign in again.");
}

export function showApp(me, {focus = false} = {}) {
  state.me = me;
  $("#signin").hidden = true;
  $("#main").hidden = false;
  $("#sections").hidden = false;
  const scope = me.scope === "admin" ? ", admin" : "";
  $("#who").textContent = me.key_id
    ? `Signed in as ${me.user_id}${scope}`
    : `Using ${me.user_id} (sign-in is switched off on this server)`;
  $("#signout").hidden = !me.key_id;
  loadSources();
  restoreConversations();
  if (focus) $("#question").focus();
  showConnectExtension();
}

async function signIn(event) {
  event.preventDefault();
  const key = $("#key").value.trim();
  if (!key) {
    $("#signin-error").textContent = "Paste your API key first.";
    $("#key").focus();
    return;
  }
  try {
    const opened = await openSession({key, remember: $("#remember").checked});
    if (!opened.ok) {
      // The server's sentence says it already ("That key was not accepted (...); ..."): said once.
      $("#signin-error").textContent = /^that key was not accepted\b/i.test(opened.message) ? opened.message
        : `That key was not accepted. ${opened.message}`;
      showKeyPath(opened.message);
      $("#key").select();
      return;
    }
    const result = await whoAmI();
    if (!result.ok) {
      $("#signin-error").textContent = result.message;
      return;
    }
    newConversation();
    showApp(result.me, {focus: true});
  } catch (err) {
    $("#signin-error").textContent = `Could not reach secondbrain. Check that it is running, then try again. (${err.message})`;
  }
}

async function signOut() {
  try {
    await fetch("/v1/session", {method: "DELETE"});
  } catch {
    // Signed out locally anyway: the page forgets everything below.
  }
  newConversation();
  clearSources();
  showSignIn("Signed out.");
}

export function wireSignIn() {
  $("#signin-form").addEventListener("submit", signIn);
  $("#signout").addEventListener("click", signOut);
}
