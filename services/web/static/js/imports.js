// Importing another app's export (Evernote, Google Takeout, Notion, bookmarks, WhatsApp, Telegram, Kindle,
// Readwise, OpenMemory, Khoj, a calendar's .ics): the file goes to POST /v1/imports, which finds its format from its content,
// and the page says what was imported, what was there already and what was skipped, with the reasons.
// Exports the extractors could not read as one file (.enex, .ics, .zip) are imported when dropped, too.

import {$, announce, el} from "./dom.js";
import {postWithProgress} from "./http.js";
import {scheduleReload} from "./sources.js";
import {plural} from "./words.js";

// Files that are exports whatever else is dropped with them: no extractor reads them as one document.
export function isExport(file) {
  return /\.(enex|ics|zip)$/i.test(file.name);
}

function zone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch {
    return "";
  }
}

function upload(file, format, resumeFrom = 0, done = 0) {
  const progress = el("progress", {max: "1", value: "0", "aria-label": `Uploading ${file.name}`});
  const said = done ? `Importing ${file.name} (${plural(done, "item", "items")} so far)` : `Importing ${file.name}`;
  const item = el("li", {}, el("span", {}, said), progress);
  $("#uploads").append(item);
  const form = new FormData();
  const tz = zone();
  if (tz) form.append("tz", tz);
  if (format) form.append("format", format);
  if (resumeFrom) form.append("resume_from", String(resumeFrom));
  form.append("file", file, file.name);
  // Once sent, the export is read there: the bar moves without a value until the answer comes.
  return postWithProgress("/v1/imports", form, progress, {untilAnswered: true}).finally(() => item.remove());
}

// What an import did, in words, with the skipped items grouped by reason.
function report(file, result) {
  const parts = [`${result.label}, ${result.found}: ${plural(result.imported, "item", "items")} imported`];
  if (result.unchanged) parts.push(`${result.unchanged} already imported before`);
  if (result.duplicates) parts.push(`${plural(result.duplicates, "duplicate", "duplicates")} left out`);
  const skipped = result.skipped.length + result.refused;
  if (skipped) parts.push(`${skipped} skipped`);
  const box = el("div", {class: "import-report"}, el("p", {}, `${file.name}: ${parts.join(", ")}.`));
  const reasons = new Map();
  for (const s of [...result.skipped, ...result.refused_items]) {
    const list = reasons.get(s.reason) || [];
    list.push(s.label);
    reasons.set(s.reason, list);
  }
  if (reasons.size) {
    const ul = el("ul", {class: "small"});
    for (const [reason, labels] of reasons) {
      const shown = labels.slice(0, 3).join(", ") + (labels.length > 3 ? ` and ${labels.length - 3} more` : "");
      ul.append(el("li", {}, `${reason}: ${shown}`));
    }
    box.append(ul);
  }
  for (const other of result.also) {
    box.append(el("p", {class: "muted small"},
      `It also holds ${other.label} (${other.found}): choose “${other.label}” below and import it again.`));
  }
  if (result.found_equal && result.found_equal.length) {
    const shown = result.found_equal.slice(0, 3).map((s) => `${s.label} (= ${s.equal_to})`).join(", ");
    box.append(el("p", {class: "muted small"}, `Found equal, imported once: ${shown}` +
      (result.found_equal.length > 3 ? ` and ${result.found_equal.length - 3} more.` : ".")));
  }
  if (result.pauses) {
    box.append(el("p", {class: "muted small"}, `Paused ${plural(result.pauses, "time", "times")} to let the ` +
      "pipeline catch up (your limit of captures in progress at once); it went on by itself."));
  }
  if (result.imported) box.append(el("p", {class: "muted small"}, "They appear under Sources as they become searchable."));
  return box;
}

// Sums what the requests of one paused and resumed import did.
function merged(total, part) {
  if (!total) return {...part, pauses: part.paused ? 1 : 0};
  const out = {...part, pauses: total.pauses + (part.paused ? 1 : 0)};
  for (const key of ["imported", "unchanged", "refused", "duplicates"]) out[key] = (total[key] || 0) + (part[key] || 0);
  for (const key of ["skipped", "refused_items", "found_equal", "damaged"]) out[key] = [...(total[key] || []), ...(part[key] || [])];
  return out;
}

function pause(seconds) {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

// An import the server paused (the person's captures in the pipeline are at SB_MAX_PENDING_JOBS) goes on
// from where it stopped once the pipeline has caught up: nothing is sent twice, and leaving the page stops it.
async function uploadAll(file, format) {
  let total = null;
  let resumeFrom = 0;
  for (;;) {
    let part;
    try {
      part = await upload(file, format, resumeFrom, total ? total.imported : 0);
    } catch (err) {
      if (err.status !== 429 || !total) throw err;  // still full: wait a little longer
      await pause(10);
      continue;
    }
    total = merged(total, part);
    if (!part.paused) return total;
    announce("capture-status", `${file.name}: paused, ${part.paused.reason}`);
    resumeFrom = part.paused.resume_from;
    await pause(part.paused.retry_after_s || 10);
  }
}

export async function importFile(file, format = "") {
  const out = $("#import-result");
  try {
    const result = await uploadAll(file, format);
    out.replaceChildren(report(file, result));
    announce("capture-status", `${file.name} imported: ${plural(result.imported, "item", "items")} added.`);
    scheduleReload(0);
  } catch (err) {
    out.replaceChildren(el("p", {class: "error"}, `${file.name} was not imported. ${err.message}`));
    announce("capture-status", `${file.name} was not imported. ${err.message}`);
  }
}

export function wireImports() {
  $("#import-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = $("#import-file");
    if (!input.files.length) {
      input.focus();
      return;
    }
    const button = $("button[type=submit]", $("#import-form"));
    button.disabled = true;
    try {
      for (const file of [...input.files]) await importFile(file, $("#import-format").value);
    } finally {
      button.disabled = false;
      input.value = "";
    }
  });
}
