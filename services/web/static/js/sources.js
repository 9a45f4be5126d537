// The source list: kind, captured time, status and tags, each stage's progress live from the job's
// event stream, the type and tag filters, deleting after a confirmation, and search as you type (the same
// hybrid search the questions use, over the sources' passages).

import {$, announce, el} from "./dom.js";
import {MODALITY_LABEL, clock, formatWhen} from "./format.js";
import {api, readEvents} from "./http.js";
import {renderFailed} from "./failed.js";
import {renderMarkdown} from "./markdown.js";
import {setSourcesLoader} from "./reload.js";
import {confirmSourceDelete, openSourcePage} from "./source-page.js";
import {state} from "./state.js";
import {rangeParams} from "./time.js";
import {plainError, plural, sourceName} from "./words.js";

const FINAL = new Set(["succeeded", "failed", "duplicate", "superseded"]);
const MAX_STREAMS = 3; // browsers allow ~6 connections per host over HTTP/1.1: leave room for the rest
const STATUS_LABEL = {queued: "Waiting", running: "Processing", succeeded: "Ready", failed: "Could not be added",
                      duplicate: "Already added", superseded: "Replaced by a newer upload"};
const STAGE_LABEL = {fetch: "fetch page", extract: "read", chunk: "split", embed: "index"};
const STAGE_STATE = {pending: "waiting", running: "working", retrying: "retrying", succeeded: "done",
                     failed: "failed", skipped: "skipped"};

const SEARCH_DELAY_MS = 300; // typing pauses this long before the search is sent
const SNIPPET_CHARS = 240;

const streams = new Map(); // job id -> the AbortController of its open event stream
let searchTimer = null;
let loads = 0; // numbers each load of the list: an older answer arriving late is not shown over a newer one
let searching = null; // the AbortController of the search under way
let waiting = []; // job ids to watch once a stream closes (at most MAX_STREAMS open)
let reloadTimer = null;

export function scheduleReload(delay = 400) {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(loadSources, delay);
}

function stageText(stages) {
  return stages.map((s) => `${STAGE_LABEL[s.stage] || s.stage}: ${STAGE_STATE[s.status] || s.status}`).join(" · ");
}

function progressOf(stages) {
  const done = stages.filter((s) => s.status === "succeeded" || s.status === "skipped").length;
  return {done, total: Math.max(stages.length, 1)};
}

function sourceRow(s) {
  const title = sourceName(s);
  const final = FINAL.has(s.status);
  const facts = el("div", {class: "facts"},
    s.modality ? el("span", {class: "badge"}, MODALITY_LABEL[s.modality] || s.modality) : null,
    s.captured_at ? el("span", {}, "Captured ", el("time", {datetime: s.captured_at}, formatWhen(s.captured_at))) : null,
    el("span", {class: `state ${s.status}`}, STATUS_LABEL[s.status] || s.status),
    s.status === "succeeded" && s.chunk_count !== null ? el("span", {}, plural(s.chunk_count, "passage", "passages")) : null,
    ...(s.tags || []).map((t) => el("span", {class: "tag"}, `#${t}`)));
  const progress = el("progress", {max: "3", value: "0", "aria-label": `Progress of ${title}`, hidden: final});
  const stages = el("div", {class: "stages", hidden: final});
  const remove = el("button", {type: "button", class: "delete", "aria-label": `Delete ${title}`,
                               disabled: !s.source_id, onclick: (e) => confirmDelete(s, title, e.currentTarget)},
                    "Delete");
  return el("li", {class: "source", dataset: {jobId: s.job_id || "", sourceId: s.source_id || "", status: s.status,
                                            modality: s.modality || ""}},
    s.source_id ? el("button", {type: "button", class: "link title", "aria-label": `Open ${title}`,
                                onclick: (e) => openSourcePage(s.source_id, e.currentTarget)}, title)
      : el("span", {class: "title"}, title), facts, progress, stages,
    s.error ? el("p", {class: "err"}, plainError(s.error)) : null,
    el("div", {class: "actions"}, remove));
}

// The tag filter's choices: the person's tags with their counts, the one chosen kept chosen.
async function loadTags() {
  const select = $("#tag-filter");
  try {
    const {tags} = await (await api("/v1/tags")).json();
    const chosen = select.value;
    select.replaceChildren(el("option", {value: ""}, "Any tag"),
      ...tags.map((t) => el("option", {value: t.tag}, `${t.tag} (${t.sources})`)));
    if (chosen && !tags.some((t) => t.tag === chosen)) select.append(el("option", {value: chosen}, `${chosen} (0)`));
    select.value = chosen;
  } catch {
    // the list still loads; the filter keeps the tags it had
  }
}

// One tag added to (or taken off) every source the list or the search shows now.
async function tagShown(add) {
  const name = $("#bulk-tag-name").value.trim();
  if (!name) {
    announce("job-status", "Write the tag first.");
    $("#bulk-tag-name").focus();
    return;
  }
  const list = $("#source-results").hidden ? "#source-list" : "#source-results";
  const ids = [...new Set([...document.querySelectorAll(`${list} [data-source-id]`)]
    .map((row) => row.dataset.sourceId).filter(Boolean))];
  if (!ids.length) {
    announce("job-status", "No sources are shown to tag.");
    return;
  }
  try {
    const res = await api(`/v1/tags/${encodeURIComponent(name)}/sources`,
                          {method: add ? "POST" : "DELETE", json: {source_ids: ids}});
    const out = await res.json();
    announce("job-status", `${add ? "Added" : "Took off"} #${out.tag} ${add ? "to" : "from"} `
      + `${plural(out.changed, "source", "sources")}.`);
    if (searchText()) search();
    else loadSources();
  } catch (err) {
    announce("job-status", `The tag was not changed. ${err.message}`);
  }
}

setSourcesLoader(loadSources); // failed.js and source-page.js reload the list through reload.js

export async function loadSources() {
  if ($("#main").hidden) return;
  clearTimeout(reloadTimer);
  const params = new URLSearchParams({limit: "100", ...rangeParams()});
  const type = $("#type-filter").value;
  if (type) params.set("modality", type);
  const status = $("#status-filter").value;
  if (status) params.set("status", status);
  const tag = $("#tag-filter").value;
  if (tag) params.set("tags", tag);
  const load = ++loads;
  loadTags();
  try {
    const res = await api(`/v1/sources?${params}`);
    const {sources} = await res.json();
    if (load !== loads) return;
    // One row per source: the newest submission of each that did not fail (earlier versions stay in its
    // history).  Captures that failed are listed apart (js/failed.js); the server lists each failed file
    // once, and only while it is the newest try of its source.
    const seen = new Set();
    const rows = sources.filter((s) => {
      const key = s.source_id || s.job_id;
      if (s.status === "failed" || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    renderFailed(sources.filter((s) => s.status === "failed"));
    // Keep the keyboard focus on the same row's button across the refresh.
    const focused = document.activeElement && document.activeElement.closest(".source .actions");
    const focusedJob = focused ? focused.closest(".source").dataset.jobId : null;
    $("#source-list").replaceChildren(...rows.map(sourceRow));
    if (focusedJob) {
      const again = document.querySelector(`.source[data-job-id="${CSS.escape(focusedJob)}"] .delete`);
      if (again) again.focus();
    }
    const filtered = type || status || tag || state.range.from;
    const more = sources.length >= 100 ? " Showing the newest; narrow the time or type to see older ones." : "";
    if (!searchText()) $("#sources-summary").textContent = rows.length
      ? `${plural(rows.length, "source", "sources")}${filtered ? (rows.length === 1 ? " matches" : " match") + " the filters" : ""}.${more}`
      : filtered ? "Nothing matches these filters." : "Nothing yet: add a file, a note, a page or a voice note.";
    for (const s of rows) if (!FINAL.has(s.status) && s.job_id) watchJob(s.job_id);
  } catch (err) {
    if (err.status !== 401) $("#sources-summary").textContent = `The sources could not be loaded. ${err.message} Try Refresh in a moment.`;
  }
}

// Forget the list (signing out), so the next person sees none of it.
export function clearSources() {
  $("#source-list").replaceChildren();
}

function onJob(job) {
  const row = document.querySelector(`.source[data-job-id="${CSS.escape(job.job_id)}"]`);
  const name = sourceName(job, "A source");
  if (row) {
    row.dataset.status = job.status;
    const stateLabel = $(".state", row);
    stateLabel.className = `state ${job.status}`;
    stateLabel.textContent = STATUS_LABEL[job.status] || job.status;
    const {done, total} = progressOf(job.stages || []);
    const bar = $("progress", row);
    bar.max = total;
    bar.value = done;
    $(".stages", row).textContent = stageText(job.stages || []);
    const final = FINAL.has(job.status);
    bar.hidden = final;
    $(".stages", row).hidden = final;
  }
  if (FINAL.has(job.status)) {
    const said = job.status === "succeeded" ? "is ready" : job.status === "duplicate" ? "was already added"
      : job.status === "superseded" ? "was replaced by a newer upload of the same file"
      : `could not be added: ${plainError(job.reason || job.error || "unknown error")}`;
    announce("job-status", `${name} ${said}.`);
    scheduleReload();
  }
}

function watchJob(jobId) {
  if (streams.has(jobId) || waiting.includes(jobId)) return;
  if (streams.size >= MAX_STREAMS) {
    waiting.push(jobId);
    return;
  }
  const controller = new AbortController();
  streams.set(jobId, controller);
  (async () => {
    try {
      const res = await api(`/v1/jobs/${encodeURIComponent(jobId)}/stream`, {signal: controller.signal});
      for await (const message of readEvents(res)) {
        if (message.event === "job") onJob(JSON.parse(message.data));
      }
    } catch (err) {
      if (err.name !== "AbortError" && err.status !== 404) scheduleReload(3000); // try again shortly
    } finally {
      streams.delete(jobId);
      const next = waiting.shift();
      if (next) watchJob(next);
    }
  })();
}

export function stopAllStreams() {
  for (const controller of streams.values()) controller.abort();
  streams.clear();
  waiting = [];
}

async function confirmDelete(source, title, button) {
  if (!await confirmSourceDelete(title, button)) return;
  try {
    await api(`/v1/sources/${encodeURIComponent(source.source_id)}`, {method: "DELETE"});
    announce("job-status", `Deleted ${title}.`);
    const row = button.closest(".source");
    if (row) row.remove();
    $("#sources-title").setAttribute("tabindex", "-1");
    $("#sources-title").focus();
    scheduleReload(0);
  } catch (err) {
    announce("job-status", `${title} was not deleted. ${err.message}`);
    button.focus();
  }
}

// ---------------------------------------------------------------- search as you type

function searchText() {
  return $("#source-search").value.trim();
}

function hitWhere(h) {
  const parts = [MODALITY_LABEL[h.modality] || h.modality];
  if (h.page !== null && h.page !== undefined) parts.push(`page ${h.page}`);
  if (h.t_start !== null && h.t_start !== undefined) parts.push(`at ${clock(h.t_start)}`);
  if (h.heading_path && h.heading_path.length) parts.push(h.heading_path.join(" › "));
  if (h.captured_at) parts.push(`captured ${formatWhen(h.captured_at)}`);
  return parts.join(" · ");
}

function resultRow(h) {
  const title = sourceName(h);
  const text = (h.text || "").replace(/\s+/g, " ").trim();
  const snippet = text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS - 1)}…` : text;
  return el("li", {class: "source-result", dataset: {sourceId: h.source_id || ""}},
    el("button", {type: "button", class: "link title", "aria-label": `Open ${title}`,
                  onclick: (e) => openSourcePage(h.source_id, e.currentTarget)}, title),
    el("span", {class: "where"}, hitWhere(h)),
    el("p", {class: "snippet"}, renderMarkdown(snippet, {inline: true})));
}

// The list while a search is typed: each source that matches once, in the order of its best passage.  When
// none matches, the server says so and sends the closest few: they are listed under that label.
function showResults(q, hits, closest) {
  const shown = hits.length ? hits : closest || [];
  const best = new Map();
  for (const h of shown) if (h.source_id && !best.has(h.source_id)) best.set(h.source_id, h);
  const list = $("#source-results");
  list.replaceChildren(...[...best.values()].map(resultRow));
  list.classList.toggle("closest", !hits.length);
  list.setAttribute("aria-label", hits.length ? "Sources that match" : "Closest sources (none matches)");
  list.hidden = false;
  $("#source-list").hidden = true;
  $("#failed").classList.add("searching");
  $("#sources-summary").textContent = hits.length
    ? `${plural(best.size, "source matches", "sources match")} “${q}”, the closest first.`
    : best.size ? `Nothing matches “${q}”. The closest ${best.size === 1 ? "source is" : "sources are"} below.`
    : `Nothing matches “${q}”.`;
}

function endSearch() {
  if (searching) searching.abort();
  searching = null;
  $("#source-results").hidden = true;
  $("#source-results").replaceChildren();
  $("#source-list").hidden = false;
  $("#failed").classList.remove("searching");
  loadSources();
}

async function search() {
  const q = searchText();
  if (q.length < 2) {
    endSearch();
    return;
  }
  if (searching) searching.abort();
  const controller = new AbortController();
  searching = controller;
  const params = new URLSearchParams({q, k: "30", ...rangeParams()});
  const type = $("#type-filter").value;
  if (type) params.set("modality", type);
  const tag = $("#tag-filter").value;
  if (tag) params.set("tags", tag);
  params.set("tz", Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC");
  try {
    const {hits, closest} = await (await api(`/v1/search?${params}`, {signal: controller.signal})).json();
    if (searching === controller && searchText() === q) showResults(q, hits, closest);
  } catch (err) {
    if (err.name !== "AbortError" && searching === controller) {
      $("#sources-summary").textContent = `The search did not work. ${err.message}`;
    }
  }
}

function onSearchInput() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(search, SEARCH_DELAY_MS);
}

export function wireSources() {
  $("#type-filter").addEventListener("change", () => (searchText() ? search() : loadSources()));
  $("#status-filter").addEventListener("change", () => loadSources());
  $("#tag-filter").addEventListener("change", () => (searchText() ? search() : loadSources()));
  $("#bulk-tag").addEventListener("submit", (e) => {
    e.preventDefault();
    tagShown(true);
  });
  $("#bulk-untag").addEventListener("click", () => tagShown(false));
  $("#refresh-sources").addEventListener("click", () => (searchText() ? search() : loadSources()));
  $("#source-search").addEventListener("input", onSearchInput);
  $("#source-search").addEventListener("keydown", (e) => {
    if (e.key === "Escape" && e.currentTarget.value) {
      e.preventDefault();
      e.stopPropagation();
      e.currentTarget.value = "";
      endSearch();
    }
  });
}
