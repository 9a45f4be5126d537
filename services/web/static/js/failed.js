// Captures that could not be added: listed apart from the sources, each once, with the reason the
// server gives (shown as it wrote it: the page does not guess from the words), Retry where the server
// says trying again may help (POST /v1/jobs/{id}/retry), and Remove (DELETE /v1/jobs/{id}).

import {$, announce, el} from "./dom.js";
import {formatWhen} from "./format.js";
import {api} from "./http.js";
import {trackCapture} from "./progress.js";
import {reloadSources} from "./reload.js";
import {plainError, plural, sourceName} from "./words.js";

// The server's sentence; an older server sends only the raw error, shown the same careful way.
export function plainReason(s) {
  return plainError(s.reason || s.error || "It could not be added.");
}

export function renderFailed(rows) {
  const list = $("#failed-list");
  $("#failed").hidden = rows.length === 0;
  $("#failed-title").textContent = rows.length ? `Could not be added (${rows.length})` : "Could not be added";
  list.replaceChildren(...rows.map((s) => {
    const name = sourceName(s);
    const actions = el("div", {class: "actions"});
    if (s.retryable) {
      actions.append(el("button", {type: "button", class: "retry", "aria-label": `Retry ${name}`,
                                   onclick: (e) => retryJob(s, name, e.currentTarget)}, "Retry"));
    }
    actions.append(el("button", {type: "button", class: "remove", "aria-label": `Remove ${name} from this list`,
                                 onclick: (e) => removeJob(s, name, e.currentTarget)}, "Remove"));
    return el("li", {class: "failed-item", dataset: {jobId: s.job_id, retryable: String(Boolean(s.retryable))}},
      el("span", {class: "title"}, name),
      s.ingested_at ? el("span", {class: "muted small"}, `Added ${formatWhen(s.ingested_at)}`) : null,
      el("p", {class: "reason"}, plainReason(s)),
      s.retryable ? null : el("p", {class: "muted small"}, "Trying again would fail the same way: fix the file "
                                                          + "and add it again, or remove it."),
      actions);
  }));
  $("#failed-summary").textContent = rows.length ? `${plural(rows.length, "capture", "captures")} could not be added.` : "";
}

async function retryJob(s, name, button) {
  button.disabled = true;
  try {
    const body = await (await api(`/v1/jobs/${encodeURIComponent(s.job_id)}/retry`, {method: "POST"})).json();
    announce("job-status", `Trying ${name} again.`);
    trackCapture(body.job_id, name);
    await reloadSources();
  } catch (err) {
    button.disabled = false;
    announce("job-status", `${name} was not retried. ${err.message}`);
  }
}

async function removeJob(s, name, button) {
  button.disabled = true;
  try {
    await api(`/v1/jobs/${encodeURIComponent(s.job_id)}`, {method: "DELETE"});
    announce("job-status", `Removed ${name}.`);
    await reloadSources();
    // Focus stays in the list: the next failed item, else the list's heading.
    const next = document.querySelector("#failed-list .failed-item button");
    if (next) next.focus();
    else {
      $("#sources-title").setAttribute("tabindex", "-1");
      $("#sources-title").focus();
    }
  } catch (err) {
    button.disabled = false;
    announce("job-status", `${name} was not removed. ${err.message}`);
  }
}
