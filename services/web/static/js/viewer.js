// Opening a citation: the cited passage in a dialog beside its original (a PDF at the cited page,
// a recording at the cited second, a photo, a link to a web page's passage).  A PDF is shown from its
// own address (the viewer's title is then the file's name); other raw files are fetched with the
// session and shown from blob: URLs.  A source deleted since the answer says so.

import {$, el} from "./dom.js";
import {MODALITY_LABEL, clock, formatWhen} from "./format.js";
import {ApiError, errorText, probe} from "./http.js";
import {renderMarkdown} from "./markdown.js";

const GONE = "This source has been deleted since this answer was given: the passage above is what was quoted "
  + "from it then.";

let blobUrls = []; // the open dialog's blob: URLs, revoked when it closes or shows another source
let opener = null; // the control that opened the dialog, focused again when it closes

// The second a recording's citation points at (from its link's #t=, else where its passage starts).
export function citedSecond(src) {
  const fragment = (src.link || "").split("#")[1] || "";
  const t = new URLSearchParams(fragment).get("t");
  if (t !== null && t !== "") return Number(t);
  return src.t_start === null || src.t_start === undefined ? null : Number(src.t_start);
}

function citedPage(src) {
  if (src.page !== null && src.page !== undefined) return Number(src.page);
  const fragment = (src.link || "").split("#")[1] || "";
  const page = new URLSearchParams(fragment).get("page");
  return page ? Number(page) : null;
}

function revokeBlobs() {
  for (const url of blobUrls) URL.revokeObjectURL(url);
  blobUrls = [];
}

async function fetchRaw(link, modality) {
  const path = link.split("#")[0];
  const res = await fetch(path);
  if (!res.ok) throw new ApiError(res.status, await errorText(res));
  const declared = (res.headers.get("content-type") || "").split(";")[0].trim().toLowerCase();
  // Only types that display inertly: never an HTML (or SVG) blob in this origin.
  let type = "application/octet-stream";
  if (modality === "pdf") type = "application/pdf";
  else if (modality === "audio" || modality === "image") {
    type = /^(audio|video|image)\/[\w.+-]+$/.test(declared) && !declared.includes("svg") ? declared : "";
  }
  const blob = new Blob([await res.arrayBuffer()], {type});
  const url = URL.createObjectURL(blob);
  blobUrls.push(url);
  return url;
}

// The page's address with a text fragment, so browsers that support them scroll to the passage.
function textFragmentUrl(uri, snippet) {
  if (uri.includes("#") || !snippet) return uri;
  const truncated = snippet.endsWith("…");
  const words = snippet.replace(/…$/, "").split(/\s+/).filter(Boolean);
  if (truncated) words.pop(); // cut mid-word
  if (words.length < 3) return uri;
  const enc = (ws) => encodeURIComponent(ws.join(" ")).replace(/-/g, "%2D");
  const directive = words.length <= 8 ? enc(words) : `${enc(words.slice(0, 4))},${enc(words.slice(-4))}`;
  return `${uri}#:~:text=${directive}`;
}

function seekAudio(audio, second) {
  const go = () => {
    audio.currentTime = Number.isFinite(audio.duration) ? Math.min(second, audio.duration) : second;
  };
  if (audio.duration === Infinity) {
    // A recording without a stated length: seeking far makes the browser find it first.
    audio.addEventListener("durationchange", go, {once: true});
    audio.currentTime = 1e9;
  } else {
    go();
  }
}

export async function openSource(src, openedBy) {
  const dialog = $("#viewer");
  const body = $("#viewer-body");
  revokeBlobs();
  opener = openedBy || document.activeElement;
  const page = citedPage(src);
  const second = citedSecond(src);
  $("#viewer-title").textContent = `[${src.n}] ${src.title || "Untitled"}`;
  const where = src.modality === "pdf" && page !== null ? `Page ${page}`
    : second !== null ? `At ${clock(second)}${src.position ? ` (passage ${src.position})` : ""}`
    : src.modality === "image" ? "The picture" : MODALITY_LABEL[src.modality] || "Passage";
  const facts = [MODALITY_LABEL[src.modality] || src.modality];
  if (src.captured_at_local || src.captured_at) facts.push(`captured ${formatWhen(src.captured_at_local || src.captured_at)}`);
  if (src.heading_path && src.heading_path.length) facts.push(src.heading_path.join(" › "));
  const media = el("div", {class: "media"}, el("p", {class: "muted"}, "Loading the original…"));
  const passageLabel = src.modality === "image" ? "Text in the image" : src.modality === "audio" ? "What is said"
    : src.modality === "pdf" && page !== null ? `Cited text on page ${page}` : "Cited passage";
  const passage = [el("h3", {class: "small-title"}, passageLabel),
                   el("blockquote", {class: "passage"}, renderMarkdown(src.snippet || "", {inline: true}))];
  // Pictures, pages and recordings first; for text the passage itself matters most.
  const shown = ["pdf", "audio", "image"].includes(src.modality) ? [media, ...passage] : [...passage, media];
  body.replaceChildren(
    el("p", {class: "where", dataset: {page: page ?? "", second: second ?? ""}}, where),
    el("p", {class: "muted small"}, facts.join(" · ")),
    ...shown);
  if (/^https?:\/\//i.test(src.source_uri || "")) {
    body.append(el("p", {}, el("a", {href: textFragmentUrl(src.source_uri, src.snippet), target: "_blank",
                                     rel: "noopener noreferrer", class: "original"},
                               `Open the original page (${src.source_uri})`)));
  }
  if (!dialog.open) dialog.showModal();

  if (src.deleted) {  // a conversation opened again after the source was deleted
    media.replaceChildren(el("p", {class: "error"}, GONE));
    return;
  }
  if (src.modality === "web" || !src.link) {
    media.replaceChildren();
    return;
  }
  try {
    if (src.modality === "pdf") {
      const path = src.link.split("#")[0];
      const found = await probe(path);
      if (!found.ok) throw new ApiError(found.status, found.message);
      const target = page !== null ? `${path}#page=${page}` : path;
      media.replaceChildren(
        el("iframe", {src: target, title: `${src.title || "PDF"}${page !== null ? `, page ${page}` : ""}`}),
        el("p", {class: "small"}, el("a", {href: target, target: "_blank", rel: "noopener"}, "Open the PDF in a new tab")));
      return;
    }
    const url = await fetchRaw(src.link, src.modality);
    if (src.modality === "audio") {
      const audio = el("audio", {controls: true, preload: "auto", dataset: {citedSecond: String(second ?? 0)},
                                 "aria-label": `${src.title || "Recording"}, from ${clock(second ?? 0)}`});
      audio.addEventListener("loadedmetadata", () => seekAudio(audio, second ?? 0), {once: true});
      audio.src = url;
      const play = el("button", {type: "button", onclick: () => {
        audio.currentTime = second ?? 0;
        audio.play().catch(() => {});
      }}, `Play from ${clock(second ?? 0)}`);
      media.replaceChildren(audio, el("div", {class: "row"}, play));
    } else if (src.modality === "image") {
      media.replaceChildren(el("img", {src: url, alt: `${src.title || "Image"}; its text is shown below`}));
    } else {
      media.replaceChildren(el("p", {}, el("a", {href: url, download: src.title || "source"}, "Download the original file")));
    }
  } catch (err) {
    const said = err.status === 404 ? GONE : err.status === 410 ? `The original file is no longer kept: ${err.message}`
      : `The original could not be shown: ${err.message}`;
    media.replaceChildren(el("p", {class: "error"}, said));
  }
}

function closeViewer() {
  $("#viewer").close();
}

function onViewerClosed() {
  for (const media of document.querySelectorAll("#viewer audio")) media.pause();
  $("#viewer-body").replaceChildren();
  revokeBlobs();
  if (opener && document.contains(opener)) opener.focus();
}

export function wireViewer() {
  $("#viewer-close").addEventListener("click", closeViewer);
  $("#viewer").addEventListener("close", onViewerClosed);
}
