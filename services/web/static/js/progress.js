// Capture progress where the capture happened (under Add) and a small indicator in the header.
// Both read the source list's live rows, so the job streams stay in one place (js/sources.js).

import {$, el} from "./dom.js";
import {plural} from "./words.js";

const WORKING = new Set(["queued", "running"]);
const SAID = {queued: "Waiting", running: "Processing", succeeded: "Ready", failed: "Could not be added",
              duplicate: "Already added"};
const tracked = new Map(); // job id -> its line under Add

// Called by js/capture.js when a capture was accepted (and by js/pwa.js for a share, in its own list,
// where a finished line stays until the person is done with it).
export function trackCapture(jobId, name, {list = "#captured", keep = false} = {}) {
  if (!jobId || tracked.has(jobId)) return;
  const bar = el("progress", {max: "3", value: "0", "aria-label": `Progress of ${name}`});
  const item = el("li", {class: "captured", dataset: {jobId, keep: keep ? "true" : "false"}},
    el("span", {class: "name"}, name), " ", el("span", {class: "state queued"}, SAID.queued), bar);
  $(list).prepend(item);
  tracked.set(jobId, item);
  refresh();
}

// A capture's answer: the same bytes already kept are said at once ("Already in your memory as receipt.jpg,
// 21 Nov."), with no progress to follow (the copy is not kept and not listed); otherwise its progress is tracked.
// Returns that sentence, or null.
export function trackAccepted(accepted, name, options = {}) {
  const already = accepted && accepted.already;
  if (!already) {
    trackCapture(accepted && accepted.job_id, name, options);
    return null;
  }
  const item = el("li", {class: "captured", dataset: {keep: options.keep ? "true" : "false"}},
    el("span", {class: "name"}, name), " ", el("span", {class: "state duplicate"}, already.message));
  $(options.list || "#captured").prepend(item);
  if (!options.keep) setTimeout(() => item.remove(), 8000);
  return already.message;
}

function refresh() {
  for (const [jobId, item] of tracked) {
    const row = document.querySelector(`.source[data-job-id="${CSS.escape(jobId)}"]`);
    if (!row) continue;
    const status = row.dataset.status;
    const label = $(".state", item);
    label.className = `state ${status}`;
    label.textContent = SAID[status] || status;
    const source = $("progress", row);
    const bar = $("progress", item);
    if (source) {
      bar.max = source.max;
      bar.value = source.value;
    }
    bar.hidden = !WORKING.has(status);
    if (!WORKING.has(status)) {
      tracked.delete(jobId);
      if (item.dataset.keep !== "true") setTimeout(() => item.remove(), 8000); // long enough to read
    }
  }
  const busy = document.querySelectorAll('.source[data-status="queued"], .source[data-status="running"]').length
    + document.querySelectorAll("#uploads li").length;
  const indicator = $("#busy");
  indicator.hidden = busy === 0;
  indicator.textContent = busy ? `${plural(busy, "capture", "captures")} in progress` : "";
}

export function wireProgress() {
  const observer = new MutationObserver(refresh);
  for (const id of ["#source-list", "#uploads"]) {
    observer.observe($(id), {childList: true, subtree: true, attributes: true, attributeFilter: ["data-status", "value"]});
  }
}
