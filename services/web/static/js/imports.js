// Importing another app's export (Evernote, Google Takeout, Notion, bookmarks, WhatsApp, Telegram, Kindle,
// Readwise, OpenMemory, Khoj, a calendar's .ics): the file goes to POST /v1/imports, which finds its format from its content,
// and the page says what was imported, what was there already and what was skipped, with the reasons.
// Exports the extractors could not read as one file (.enex, .ics, .zip) are imported when dropped, too.

import {$, announce, el} from "./dom.js";
import {duration} from "./format.js";
import {postLines} from "./http.js";
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

// Where an import stands, from the server's last line: how many of how many, how fast, how long still.
function standing(p) {
  const parts = [`${p.done} of ${plural(p.total, "item", "items")}`];
  if (p.rate > 0) parts.push(`${p.rate.toFixed(1)} items/s`);
  if (p.rate > 0 && p.eta_s !== null && p.done < p.total) parts.push(`${duration(p.eta_s)} left`);
  return parts.join(" · ");
}

// The line of #uploads that follows one export's import, across the requests it takes.
function uploadRow(file) {
  const progress = el("progress", {max: "1", value: "0", "aria-label": `Importing ${file.name}`});
  const said = el("span", {}, `Importing ${file.name}`);
  const item = el("li", {}, said, progress);
  $("#uploads").append(item);
  return {
    progress,
    say: (text) => { said.textContent = `Importing ${file.name}: ${text}`; },
    remove: () => item.remove(),
  };
}

// One request of an import: the file goes to POST /v1/imports, which answers in lines as its items go in.
// `state` keeps what the lines acknowledged (where to go on, and what was done up to there).
function upload(file, format, row, state) {
  const form = new FormData();
  const tz = zone();
  if (tz) form.append("tz", tz);
  if (format) form.append("format", format);
  if (state.resumeFrom) form.append("resume_from", String(state.resumeFrom));
  form.append("file", file, file.name);
  state.acked = null;
  row.progress.value = 0;
  return postLines("/v1/imports", form, row.progress, (line) => {
    if (line.part) state.acked = merged(state.acked, line.part, false);
    if (line.progress) {
      state.resumeFrom = line.progress.resume_from;
      state.begun = true;
      row.progress.value = line.progress.total ? line.progress.done / line.progress.total : 0;
      row.say(standing(line.progress));
    }
  });
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
  if (result.restarts) {
    box.append(el("p", {class: "muted small"}, `The connection dropped ${plural(result.restarts, "time", "times")} ` +
      "(secondbrain restarted); the import went on from where it stopped, and nothing was imported twice."));
  }
  if (result.imported) box.append(el("p", {class: "muted small"}, "They appear under Sources as they become searchable."));
  return box;
}

// Sums what the requests of one paused (or cut short) and resumed import did.
function merged(total, part, counts = true) {
  const paused = counts && part.paused ? 1 : 0;
  if (!total) return {...part, pauses: paused, restarts: 0};
  const out = {...part, pauses: (total.pauses || 0) + paused, restarts: total.restarts || 0};
  for (const key of ["imported", "unchanged", "refused", "duplicates"]) out[key] = (total[key] || 0) + (part[key] || 0);
  for (const key of ["skipped", "refused_items", "found_equal", "damaged"]) out[key] = [...(total[key] || []), ...(part[key] || [])];
  return out;
}

function pause(seconds) {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

// Until secondbrain answers again (after a restart), asking every second, for at most ten minutes.
async function backAgain() {
  for (let i = 0; i < 600; i++) {
    await pause(1);
    try {
      if ((await fetch("/healthz", {cache: "no-store"})).ok) return true;
    } catch {
      // still away
    }
  }
  return false;
}

// An import the server paused (the person's captures in the pipeline are at SB_MAX_PENDING_JOBS) goes on
// from where it stopped once the pipeline has caught up; one whose connection dropped after it began (a
// restart of secondbrain) goes on from the last item the server said was in, once it answers again.  Nothing
// is sent twice (an item that went in after that last line is found unchanged), and leaving the page stops it.
async function uploadAll(file, format) {
  const row = uploadRow(file);
  const state = {resumeFrom: 0, acked: null, begun: false};
  let total = null;
  let stuck = 0;  // connections lost in a row without an item more (then it is not a restart)
  try {
    for (;;) {
      let part;
      const from = state.resumeFrom;
      try {
        part = await upload(file, format, row, state);
      } catch (err) {
        if (err.status === 429 && total) {  // still full: wait a little longer
          await pause(10);
          continue;
        }
        if (!err.lost || !state.begun) throw err;
        stuck = state.resumeFrom > from ? 0 : stuck + 1;
        if (stuck > 3) throw err;
        if (state.acked) total = merged(total, state.acked, false);
        total = {...total, restarts: ((total && total.restarts) || 0) + 1};
        const going = `secondbrain restarted; going on from item ${state.resumeFrom + 1} once it is back…`;
        row.say(going);
        announce("capture-status", `${file.name}: ${going}`);
        if (!(await backAgain())) throw err;
        continue;
      }
      total = merged(total, part);
      if (!part.paused) return total;
      announce("capture-status", `${file.name}: paused, ${part.paused.reason}`);
      row.say(`paused (${plural(total.imported, "item", "items")} in so far)`);
      state.resumeFrom = part.paused.resume_from;
      await pause(part.paused.retry_after_s || 10);
    }
  } finally {
    row.remove();
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
