// The settings view's second half: the time zone (this browser's and the server's), the person's
// own API keys, downloading everything as a ZIP with progress, and the version.  Also turns the
// answers' "no language model" note into a link to the settings.

import {$, announce, el} from "./dom.js";
import {formatWhen} from "./format.js";
import {api} from "./http.js";
import {state} from "./state.js";
import {plural} from "./words.js";

export async function loadAccount() {
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "unknown";
  $("#zone-browser").textContent = browserZone;
  try {
    const status = await (await api("/v1/status")).json();
    $("#zone-server").textContent = status.timezone || "UTC";
    $("#version").textContent = status.version || "unknown";
    $("#zone-note").textContent = status.timezone && status.timezone !== browserZone
      ? "Dates on this page are shown in this browser's zone; words like “yesterday” in questions use the server's."
      : "";
  } catch {
    // The status line above already says why.
  }
  await loadKeys();
}

export async function loadKeys() {
  const list = $("#key-list");
  try {
    const {keys} = await (await api("/v1/keys")).json();
    const active = keys.filter((k) => !k.revoked);
    $("#keys-summary").textContent = plural(active.length, "key", "keys") + " in use.";
    list.replaceChildren(...active.map((k) => {
      const current = Boolean(state.me && state.me.key_id === k.key_id);
      return el("li", {class: "key", dataset: {keyId: k.key_id}},
        el("span", {class: "key-name"}, k.name || "unnamed"),
        el("span", {class: "muted small"}, [`created ${formatWhen(k.created_at)}`,
          k.last_used_at ? `last used ${formatWhen(k.last_used_at)}` : "never used",
          k.scope === "admin" ? "admin" : null, k.scope === "capture" ? "adds only" : null, current ? "this sign-in" : null].filter(Boolean).join(" · ")),
        el("button", {type: "button", class: "revoke", "aria-label": `Revoke ${k.name || "unnamed"}`,
                      disabled: current, onclick: (e) => revoke(k, e.currentTarget)}, "Revoke"));
    }));
  } catch (err) {
    $("#keys-summary").textContent = `Your keys could not be loaded. ${err.message}`;
  }
}

async function createKey(event) {
  event.preventDefault();
  const name = $("#key-name").value.trim() || "web";
  $("#new-key").hidden = true;
  try {
    const made = await (await api("/v1/keys", {method: "POST", json: {name, scope: "user"}})).json();
    $("#key-name").value = "";
    $("#new-key-value").value = made.api_key;
    $("#new-key").hidden = false;
    $("#new-key-value").focus();
    $("#new-key-value").select();
    await loadKeys();
  } catch (err) {
    announce("keys-status", `The key was not created. ${err.message}`);
  }
}

async function revoke(key, button) {
  button.disabled = true;
  try {
    await api(`/v1/keys/${encodeURIComponent(key.key_id)}`, {method: "DELETE"});
    announce("keys-status", `Revoked ${key.name || "the key"}.`);
    await loadKeys();
    $("#keys-title").focus();
  } catch (err) {
    button.disabled = false;
    announce("keys-status", `The key was not revoked. ${err.message}`);
  }
}

// The export streams as it is made: read it piece by piece to show how much has arrived.
async function exportAll() {
  const button = $("#export-button");
  const bar = $("#export-progress");
  button.disabled = true;
  bar.hidden = false;
  bar.removeAttribute("value");
  $("#export-status").textContent = "Preparing your archive…";
  try {
    const res = await api("/v1/export");
    const total = Number(res.headers.get("content-length")) || 0;
    const reader = res.body.getReader();
    const parts = [];
    let got = 0;
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      parts.push(value);
      got += value.length;
      if (total) bar.value = got / total;
      $("#export-status").textContent = `Downloaded ${(got / 1048576).toFixed(1)} MB…`;
    }
    const name = (/filename="([^"]+)"/.exec(res.headers.get("content-disposition") || "") || [])[1]
      || "secondbrain-export.zip";
    const url = URL.createObjectURL(new Blob(parts, {type: "application/zip"}));
    const link = el("a", {href: url, download: name, hidden: true});
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    announce("export-status", `Your archive is ready (${(got / 1048576).toFixed(1)} MB): ${name}.`);
  } catch (err) {
    announce("export-status", `The archive could not be made. ${err.message}`);
  } finally {
    button.disabled = false;
    bar.hidden = true;
  }
}

// The answer's "No language model is configured" note links here (the note comes from the server).
function linkNotices(root) {
  for (const span of root.querySelectorAll(".meta span:not([data-linked])")) {
    if (!/^No language model is configured/.test(span.textContent)) continue;
    span.dataset.linked = "true";
    span.append(" ", el("a", {href: "#settings", class: "to-settings", onclick: () => loadAccount()},
                        "Set one up in Settings"));
  }
}

export function wireAccount() {
  $("#key-form").addEventListener("submit", createKey);
  $("#export-button").addEventListener("click", exportAll);
  $("#settings-refresh").addEventListener("click", loadAccount);
  for (const link of document.querySelectorAll('a[href="#settings"]')) link.addEventListener("click", loadAccount);
  new MutationObserver(() => linkNotices($("#thread"))).observe($("#thread"), {childList: true, subtree: true});
}
