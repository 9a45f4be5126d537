// Captures that could not be added: listed apart from the sources, each with its reason in plain
// words and a Retry that submits the stored file again (POST /v1/jobs/{id}/retry).

import {$, announce, el} from "./dom.js";
import {formatWhen} from "./format.js";
import {api} from "./http.js";
import {trackCapture} from "./progress.js";
import {plainError, plural, sourceName} from "./words.js";

// Known reasons, said as what happened and what to do next.
const REASONS = [
  [/no (speech|transcriber)|transcrib/i, "The recording could not be transcribed. Check the transcriber in Settings, then retry."],
  [/robots\.txt/i, "The site asks not to be fetched by programs, so the page was not saved. Paste its text as a note instead."],
  [/timed? ?out|timeout/i, "It took too long. Retry in a moment."],
  [/not allowed|private|loopback/i, "This address cannot be fetched from here. Paste the page's text as a note instead."],
  [/no text|empty|nothing to (index|ingest)/i, "No text was found in it. If it is a scan or photo, check the text reader (OCR) in Settings, then retry."],
  [/encrypted|password/i, "The file is protected by a password. Save an unprotected copy and add that."],
  [/not a (valid )?pdf|broken|corrupt|could not (be )?(read|parse|open)|invalid|no \/root|eof/i,
   "The file could not be read; it may be damaged. Retry, or export it again from the program that made it."],
];

export function plainReason(error) {
  const raw = String(error || "");
  for (const [pattern, sentence] of REASONS) if (pattern.test(raw)) return sentence;
  return raw ? `${plainError(raw)} Retry, or add it again.` : "It could not be added. Retry, or add it again.";
}

export function renderFailed(rows) {
  const list = $("#failed-list");
  $("#failed").hidden = rows.length === 0;
  $("#failed-title").textContent = rows.length ? `Could not be added (${rows.length})` : "Could not be added";
  list.replaceChildren(...rows.map((s) => {
    const name = sourceName(s);
    const retry = el("button", {type: "button", class: "retry", "aria-label": `Retry ${name}`,
                                onclick: (e) => retryJob(s, name, e.currentTarget)}, "Retry");
    return el("li", {class: "failed-item", dataset: {jobId: s.job_id}},
      el("span", {class: "title"}, name),
      s.captured_at ? el("span", {class: "muted small"}, `Added ${formatWhen(s.ingested_at || s.captured_at)}`) : null,
      el("p", {class: "reason"}, plainReason(s.error)),
      el("div", {class: "actions"}, retry));
  }));
  $("#failed-summary").textContent = rows.length ? `${plural(rows.length, "capture", "captures")} could not be added.` : "";
}

async function retryJob(s, name, button) {
  button.disabled = true;
  try {
    const body = await (await api(`/v1/jobs/${encodeURIComponent(s.job_id)}/retry`, {method: "POST"})).json();
    announce("job-status", `Trying ${name} again.`);
    trackCapture(body.job_id, name);
    const {loadSources} = await import("./sources.js");
    await loadSources();
  } catch (err) {
    button.disabled = false;
    announce("job-status", `${name} was not retried. ${err.message}`);
  }
}
