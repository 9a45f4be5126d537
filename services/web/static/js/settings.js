// The settings view: what answers, embeds, transcribes and reads images, each with its state, and
// (admins) the endpoint answers come from.  The server never sends the answer endpoint's API key
// back: the form only says whether one is set.

import {$, announce, el} from "./dom.js";
import {formatWhen} from "./format.js";
import {api} from "./http.js";
import {loadWritten} from "./written.js";

const STATES = {"working": "Working", "not configured": "Not configured", "error": "Error"};

export function wireSettings() {
  // Read afresh whenever the person goes to the view (a model server may have started meanwhile).
  for (const link of document.querySelectorAll('a[href="#settings"]')) link.addEventListener("click", loadSettings);
  $("#settings-refresh").addEventListener("click", loadSettings);
  $("#answers-form").addEventListener("submit", saveAnswers);
  // What the person is typing is never overwritten by a refresh of the view.
  $("#answers-form").addEventListener("input", (event) => { event.currentTarget.dataset.edited = "true"; });
  $("#answers-reset").addEventListener("click", resetAnswers);
  $("#backup-now").addEventListener("click", backUpNow);
  showBrowserCapture();
}

// The bookmarklet runs on whatever site the person is on, so it carries no key: it opens this
// server's /save page in a window of its own, with the page's address, title, selection and text in
// the fragment, and that page saves with the session cookie once the person presses Save.
export function bookmarklet(origin) {
  const code = "(()=>{const d=document,b=d.body;"
    + "const p=new URLSearchParams({url:location.href,title:d.title,"
    + "selection:String(getSelection()).slice(0,20000),text:(b&&b.innerText||'').slice(0,100000)});"
    + `window.open(${JSON.stringify(`${origin}/save#`)}+p,'_blank','popup,width=560,height=680,noopener')})()`;
  return `javascript:${encodeURIComponent(code)}`;
}

function showBrowserCapture() {
  const link = $("#bookmarklet");
  link.href = bookmarklet(location.origin);
  // Pressed here it would only open the save window for this page: it is meant for the bookmarks bar.
  link.addEventListener("click", (event) => event.preventDefault());
  $("#server-address").textContent = location.origin;
}

export async function loadSettings() {
  const list = $("#status-list");
  $("#status-error").textContent = "";
  try {
    const {components} = await (await api("/v1/status")).json();
    list.replaceChildren(...Object.entries(components).map(([id, c]) => statusRow(id, c)));
  } catch (err) {
    $("#status-error").textContent = `Could not read the status: ${err.message}`;
  }
  await Promise.all([loadAnswers(), loadWritten(), loadBackups()]);
}

function statusRow(id, c) {
  const state = c.state in STATES ? STATES[c.state] : c.state;
  return el("li", {class: "status-item", dataset: {component: id, state: c.state}},
    el("span", {class: "status-label", text: c.label}),
    el("span", {class: "status-name", text: c.name || "none"}),
    el("span", {class: `state ${c.state.replace(" ", "-")}`, text: state}),
    c.message ? el("p", {class: "muted small", text: c.message}) : null);
}

async function loadAnswers() {
  const form = $("#answers-form");
  let res;
  try {
    res = await api("/v1/settings/answers");
  } catch (err) {
    form.hidden = true; // not an admin (403): only the status above
    if (err.status !== 403) $("#status-error").textContent = err.message;
    return;
  }
  showAnswers(await res.json());
}

function showAnswers(a) {
  const form = $("#answers-form");
  form.hidden = false;
  if (!form.dataset.edited) {
    form.elements.base_url.value = a.source === "set here" ? a.base_url : "";
    form.elements.model.value = a.source === "set here" ? a.model : "";
    form.elements.api_key.value = "";
  }
  form.elements.api_key.placeholder = a.api_key_set ? "a key is set (leave empty to keep it)" : "none";
  const from = {"set here": "set here", "start-up": "from start-up (--llm, SB_LLM_BASE_URL or found running)",
                "none": "none"}[a.source] || a.source;
  $("#answers-source").textContent = `Answer endpoint: ${from}.`;
  $("#answers-reset").hidden = a.source !== "set here";
}

async function saveAnswers(event) {
  event.preventDefault();
  const form = event.target;
  const body = {base_url: form.elements.base_url.value.trim()};
  if (form.elements.model.value.trim()) body.model = form.elements.model.value.trim();
  if (form.elements.api_key.value) body.api_key = form.elements.api_key.value;
  $("#answers-error").textContent = "";
  $("#answers-save").disabled = true;
  try {
    await api("/v1/settings/answers", {method: "PUT", json: body});
    delete form.dataset.edited;
    await loadSettings();
  } catch (err) {
    $("#answers-error").textContent = err.message;
  } finally {
    $("#answers-save").disabled = false;
  }
}

async function resetAnswers() {
  $("#answers-error").textContent = "";
  try {
    await api("/v1/settings/answers", {method: "DELETE"});
    delete $("#answers-form").dataset.edited;
    await loadSettings();
  } catch (err) {
    $("#answers-error").textContent = err.message;
  }
}

// Backups (admins): the last one and its size, a warning when it is overdue (older than twice the
// interval), and "Back up now", with what the server is doing and the time left while it writes.
function megabytes(bytes) {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

function every(seconds) {
  if (seconds % 86400 === 0) return seconds === 86400 ? "every day" : `every ${seconds / 86400} days`;
  if (seconds % 3600 === 0) return seconds === 3600 ? "every hour" : `every ${seconds / 3600} hours`;
  return `every ${Math.round(seconds / 60)} minutes`;
}

async function loadBackups() {
  let status;
  try {
    status = await (await api("/v1/admin/backups")).json();
  } catch {
    $("#backups").hidden = true; // not an admin, or this server does not take backups itself
    return null;
  }
  showBackups(status);
  return status;
}

function showBackups(b) {
  $("#backups").hidden = false;
  const last = b.last;
  $("#backup-last").textContent = last
    ? `Last backup: ${formatWhen(last.taken_at)}, ${megabytes(last.size)}${b.sealed ? ", sealed" : ""}.`
    : "No backup yet.";
  const warning = $("#backup-warning");
  warning.hidden = !b.stale;
  if (b.stale) {
    warning.textContent = last
      ? `The last backup is older than twice the interval (${every(b.interval_s)}): back up now, and see the `
        + "server's log for why the scheduled ones did not happen."
      : `Backups are due ${every(b.interval_s)}, and none was made yet: back up now.`;
    if (b.last_error) warning.textContent += ` The last try failed: ${b.last_error}`;
  }
  $("#backup-schedule").textContent = (b.scheduled
    ? `Backed up ${every(b.interval_s)} into ${b.folder}, keeping ${b.keep.daily} daily and ${b.keep.weekly} weekly.`
    : `Scheduled backups are off (SB_BACKUP_INTERVAL=off; 24h backs up daily); "Back up now" writes into ${b.folder}.`);
  $("#backup-now").disabled = Boolean(b.running);
  if (b.running) showRunning(b.running);
}

function showRunning(r) {
  const left = r.left_s == null ? "" : `, about ${Math.max(1, Math.round(r.left_s))} s left`;
  $("#backup-status").textContent = `Backing up: ${r.what}, ${Math.round(r.done * 100)} %${left}.`;
}

async function backUpNow() {
  const button = $("#backup-now");
  button.disabled = true;
  $("#backup-status").textContent = "Backing up…";
  const watch = setInterval(async () => {
    try {
      const b = await (await api("/v1/admin/backups")).json();
      if (b.running) showRunning(b.running);
    } catch { /* the answer to the backup itself says what went wrong */ }
  }, 1000);
  try {
    const made = await (await api("/v1/admin/backups", {method: "POST"})).json();
    showBackups(made.status);
    announce("backup-status", `Backed up: ${made.archive.name}, ${megabytes(made.archive.size)}.`);
  } catch (err) {
    announce("backup-status", `The backup did not finish. ${err.message}`);
  } finally {
    clearInterval(watch);
    button.disabled = false;
  }
}
