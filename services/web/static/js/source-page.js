// A source's own page: its preview (PDF, picture, recording or the text, its Markdown shown safely),
// its passages, versions, jobs with their stages, its tags, download, edit and delete.  A PDF is shown from its own
// address (so the viewer's title is the file's name); other raw files are fetched with the session
// and shown from blob: URLs, as the citation viewer does.

import {$, announce, confirmed, el} from "./dom.js";
import {MODALITY_LABEL, clock, formatWhen} from "./format.js";
import {ApiError, api, errorText} from "./http.js";
import {renderMarkdown} from "./markdown.js";
import {reloadSources} from "./reload.js";
import {plural, sourceName} from "./words.js";

const STAGE = {fetch: "fetch the page", extract: "read", chunk: "split", embed: "index"};
const STAGE_STATE = {pending: "waiting", running: "working", retrying: "retrying", succeeded: "done",
                     failed: "failed", skipped: "skipped"};
const STATUS = {queued: "Waiting", running: "Processing", succeeded: "Ready", failed: "Could not be added",
                duplicate: "Already added", superseded: "Replaced by a newer upload"};
let urls = [];
let opener = null;
let current = null; // the source shown

function size(bytes) {
  if (bytes === null || bytes === undefined) return null;
  const units = ["bytes", "KB", "MB", "GB"];
  let n = bytes;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

async function blobOf(path, type) {
  const res = await fetch(path);
  if (!res.ok) throw new ApiError(res.status, await errorText(res));
  const declared = (res.headers.get("content-type") || "").split(";")[0].trim().toLowerCase();
  // Only types that display inertly: never an HTML or SVG blob in this origin.
  const safe = type || (/^(audio|video|image)\/[\w.+-]+$/.test(declared) && !declared.includes("svg") ? declared
    : "application/octet-stream");
  const url = URL.createObjectURL(new Blob([await res.arrayBuffer()], {type: safe}));
  urls.push(url);
  return url;
}

function where(p) {
  if (p.page !== undefined && p.page !== null) return `Page ${p.page}`;
  if (p.t_start !== undefined && p.t_start !== null) return `At ${clock(p.t_start)}`;
  if (p.heading_path && p.heading_path.length) return p.heading_path.join(" › ");
  return `Passage ${Number(p.chunk_index || 0) + 1}`;
}

// A passage's text as it reads: Markdown shown safely; a recording's transcript, which the transcriber
// cuts into short blocks (one per pause), flows as one paragraph instead of a block per line.
function passageText(p, modality) {
  const text = p.text || "";
  return renderMarkdown(modality === "audio" ? text.replace(/\s*\n\s*/g, " ") : text);
}

function jobLine(job) {
  const stages = (job.stages || []).map((s) => `${STAGE[s.stage] || s.stage}: ${STAGE_STATE[s.status] || s.status}`);
  return el("li", {class: "job", dataset: {status: job.status}},
    el("span", {class: `state ${job.status}`}, STATUS[job.status] || job.status), " ",
    el("span", {class: "muted small"}, `${formatWhen(job.created_at)} · ${stages.join(" · ")}`));
}

export async function openSourcePage(sourceId, openedBy) {
  const dialog = $("#source-page");
  opener = openedBy || document.activeElement;
  const body = $("#source-page-body");
  body.replaceChildren(el("p", {class: "muted"}, "Loading…"));
  $("#source-page-title").textContent = "Source";
  if (!dialog.open) dialog.showModal();
  let src;
  try {
    src = await (await api(`/v1/sources/${encodeURIComponent(sourceId)}`)).json();
  } catch (err) {
    body.replaceChildren(el("p", {class: "error"}, `This source could not be opened. ${err.message}`));
    return;
  }
  current = src;
  const name = sourceName(src);
  $("#source-page-title").textContent = name;
  const version = src.versions.find((v) => v.version === src.current_version) || src.versions[0] || {};
  const facts = [MODALITY_LABEL[src.modality] || src.modality, STATUS[src.status] || src.status,
                 version.captured_at ? `captured ${formatWhen(version.captured_at)}` : null,
                 size(version.size_bytes),
                 version.chunk_count !== null && version.chunk_count !== undefined
                   ? plural(version.chunk_count, "passage", "passages") : null].filter(Boolean);
  const preview = el("div", {class: "media preview"});
  const passages = el("ol", {class: "passages"});
  const actions = el("div", {class: "row"});
  const web = /^https?:\/\//i.test(src.source_uri || "");
  body.replaceChildren(...[  // (replaceChildren would show a null as the word "null")
    el("p", {class: "muted small facts-line"}, facts.join(" · ")),
    web ? el("p", {}, el("a", {href: src.source_uri, target: "_blank", rel: "noopener noreferrer"}, "Open the original page"))
      : null,
    el("h3", {class: "small-title"}, "Preview"), preview,
    actions,
    el("h3", {class: "small-title"}, "Passages"), passages,
    el("h3", {class: "small-title"}, "Versions"),
    el("ol", {class: "versions"}, ...src.versions.map((v) => el("li", {},
      el("span", {}, v.version ? `Version ${v.version}${v.superseded ? "" : " (current)"}` : "Not read yet"), " ",
      el("span", {class: "muted small"}, [v.ingested_at ? `added ${formatWhen(v.ingested_at)}` : "",
        v.raw === "expired" ? "original file no longer kept" : ""].filter(Boolean).join(" · ")),
      el("ul", {class: "jobs", "aria-label": "Processing"}, ...v.jobs.map(jobLine)))))].filter(Boolean));
  const remove = el("button", {type: "button", class: "danger", onclick: (e) => deleteSource(name, e.currentTarget)},
                    "Delete");
  const edit = el("button", {type: "button", onclick: () => openEditor(src, version, actions)}, "Edit");
  actions.append(edit, remove);
  if (src.tags && src.tags.length) {
    body.firstChild.after(el("p", {class: "small tags-line"}, "Tags: ",
      ...src.tags.map((t) => el("span", {class: "tag"}, `#${t} `))));
  }

  // The passages, and the text of a page or note, from the index.
  let rows = [];
  try {
    rows = (await (await api(`/v1/sources/${encodeURIComponent(sourceId)}/passages`)).json()).passages;
  } catch (err) {
    passages.replaceWith(el("p", {class: "error"}, `The passages could not be loaded. ${err.message}`));
  }
  passages.replaceChildren(...rows.map((p) => el("li", {class: "passage-item"},
    el("span", {class: "where muted small"}, where(p)), el("div", {class: "passage-text"}, passageText(p, src.modality)))));
  if (!rows.length) passages.replaceChildren(el("li", {class: "muted"}, "No passages yet."));

  const raw = version.raw_url;
  try {
    if (raw && src.modality === "pdf") {
      // From its own address: Chromium's viewer then names it by the file, not by a blob's number (the
      // server sends it in a sandbox of its own, with the file's name).
      preview.replaceChildren(el("iframe", {src: raw, title: `${name}, the PDF`}));
    } else if (raw && src.modality === "image") {
      preview.replaceChildren(el("img", {src: await blobOf(raw), alt: `${name}; its text is under Passages`}));
    } else if (raw && src.modality === "audio") {
      preview.replaceChildren(el("audio", {controls: true, preload: "metadata", src: await blobOf(raw),
                                           "aria-label": `${name}, the recording`}));
    } else {
      const text = rows.map((p) => p.text || "").join("\n\n");
      preview.replaceChildren(text ? el("div", {class: "page-text", tabindex: "0", role: "region",
                                                "aria-label": `The text of ${name}`}, renderMarkdown(text))
        : el("p", {class: "muted"}, "Nothing to show yet."));
    }
    if (raw) {
      const url = src.modality === "pdf" ? raw : urls.length ? urls[urls.length - 1] : await blobOf(raw);
      actions.prepend(el("a", {class: "button", href: url, download: name}, "Download the original"));
    }
  } catch (err) {
    preview.replaceChildren(el("p", {class: "error"}, `The original could not be shown. ${err.message}`));
  }
}

// The words of a note or a text file are its own and can be edited (a new version); a PDF's, a picture's,
// a recording's or a fetched page's come from the file, and only the title and tags change.
const EDITABLE = new Set(["text/plain", "text/markdown", "text/x-markdown"]);

async function openEditor(src, version, actions) {
  if (document.getElementById("source-editor")) return;
  const type = (version.content_type || "").split(";")[0].trim().toLowerCase();
  const wordsEditable = EDITABLE.has(type) && version.raw_url && !["audio", "image"].includes(src.modality);
  const title = el("input", {id: "edit-title", type: "text", maxlength: "500", value: src.title || ""});
  const tags = el("input", {id: "edit-tags", type: "text", value: (src.tags || []).join(", "),
                            placeholder: "garden, work/plans"});
  const text = el("textarea", {id: "edit-text", rows: "12"});
  const status = el("p", {id: "edit-status", class: "small", role: "status", "aria-live": "polite"});
  if (wordsEditable) {
    try {
      text.value = await (await fetch(version.raw_url)).text();
    } catch {
      text.disabled = true;
    }
  }
  const original = text.value;
  const form = el("form", {id: "source-editor", class: "source-editor", "aria-label": "Edit this source"},
    el("label", {for: "edit-title"}, "Title"), title,
    el("label", {for: "edit-tags"}, "Tags (separated by commas)"), tags,
    wordsEditable ? el("label", {for: "edit-text"}, "Text") : el("p", {class: "muted small"},
      "The words of this source come from its file and cannot be edited here; its title and tags can."),
    wordsEditable ? text : null, status,
    el("div", {class: "row"}, el("button", {type: "submit"}, "Save"),
      el("button", {type: "button", onclick: () => form.remove()}, "Cancel")));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = {tags: tags.value.split(",").map((t) => t.trim()).filter(Boolean)};
    if (title.value.trim() && title.value.trim() !== src.title) body.title = title.value.trim();
    if (wordsEditable && text.value !== original) body.text = text.value;
    status.textContent = "Saving…";
    try {
      const res = await api(`/v1/sources/${encodeURIComponent(src.source_id)}`, {
        method: "PATCH", json: body,
        headers: src.current_version ? {"If-Match": `"${src.current_version}"`} : {}});
      // The page again, as it is now: a new version shows under Versions while it is indexed.
      announce("job-status", res.status === 202 ? "Saved: the new version is being indexed." : "Saved.");
      reloadSources();
      openSourcePage(src.source_id, opener);
    } catch (err) {
      status.textContent = `Not saved. ${err.message}`;
    }
  });
  actions.after(form);
  title.focus();
}

// Asks before a source is deleted (from its page or from the list): true when the person confirmed.
export function confirmSourceDelete(name, button) {
  $("#confirm-title").textContent = `Delete “${name}”?`;
  $("#confirm-text").textContent = "It is removed with every version, its indexed passages and its original "
    + "file. This cannot be undone.";
  return confirmed($("#confirm-delete"), button);
}

async function deleteSource(name, button) {
  if (!await confirmSourceDelete(name, button)) return;
  try {
    await api(`/v1/sources/${encodeURIComponent(current.source_id)}`, {method: "DELETE"});
    announce("job-status", `Deleted ${name}.`);
    $("#source-page").close();
    reloadSources();
  } catch (err) {
    announce("job-status", `${name} was not deleted. ${err.message}`);
  }
}

export function wireSourcePage() {
  $("#source-page-close").addEventListener("click", () => $("#source-page").close());
  $("#source-page").addEventListener("close", () => {
    for (const media of document.querySelectorAll("#source-page audio")) media.pause();
    $("#source-page-body").replaceChildren();
    for (const url of urls) URL.revokeObjectURL(url);
    urls = [];
    if (opener && document.contains(opener)) opener.focus();
  });
}
