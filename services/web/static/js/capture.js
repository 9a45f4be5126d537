// Capturing: files (chosen, dropped or pasted anywhere on the page, several at once, with upload
// progress), notes, web page addresses (typed, pasted or dropped), and voice notes recorded in the
// browser.

import {$, announce, el} from "./dom.js";
import {clock, dateValue, isoLocal, pad} from "./format.js";
import {api, postWithProgress} from "./http.js";
import {importFile, isExport} from "./imports.js";
import {trackAccepted, trackCapture} from "./progress.js";
import {scheduleReload} from "./sources.js";

let recorder = null; // the MediaRecorder while a voice note is being recorded

function uploadFile(file, {title = null, capturedAt = null} = {}) {
  const progress = el("progress", {max: "1", value: "0", "aria-label": `Uploading ${file.name}`});
  const item = el("li", {}, el("span", {}, `Uploading ${file.name}`), progress);
  $("#uploads").append(item);
  const form = new FormData();
  if (title) form.append("title", title);
  if (capturedAt) form.append("captured_at", capturedAt);
  form.append("file", file, file.name);
  return postWithProgress("/v1/artifacts", form, progress).finally(() => item.remove());
}

async function addFiles(files) {
  const all = [...files];
  for (const file of all.filter(isExport)) await importFile(file); // another app's export: read as one
  const list = all.filter((file) => !isExport(file));
  if (!list.length) return;
  let added = 0;
  const failures = [];
  const already = [];
  for (const file of list) {
    try {
      const accepted = await uploadFile(file);
      const said = trackAccepted(accepted, file.name);
      if (said) already.push(`${file.name}: ${said}`);
      else added += 1;
      scheduleReload(0);
    } catch (err) {
      failures.push(`${file.name}: ${err.message}`);
    }
  }
  const message = [added ? `Added ${added} file${added === 1 ? "" : "s"}; progress shows below.` : "",
                   already.join(" "),
                   failures.length ? `Not added: ${failures.join("; ")}` : ""].filter(Boolean).join(" ");
  announce("capture-status", message);
}

// A pasted picture has no name of its own ("image.png"): it is named by when it was pasted.
function named(file) {
  if (file.name && !/^image\.\w+$/i.test(file.name)) return file;
  const now = new Date();
  const ext = (file.type.split("/")[1] || "png").replace("jpeg", "jpg").replace(/\W.*$/, "");
  const stamp = `${dateValue(now)} ${pad(now.getHours())}-${pad(now.getMinutes())}-${pad(now.getSeconds())}`;
  return new File([file], `Pasted picture ${stamp}.${ext}`, {type: file.type, lastModified: now.getTime()});
}

const LINK = /^https?:\/\/[^\s<>"]+$/i;

async function addLink(url) {
  try {
    const res = await api("/v1/urls", {method: "POST", json: {url}});
    trackCapture((await res.json()).job_id, url);
    announce("capture-status", `Fetching ${url}; progress shows under Add.`);
    scheduleReload(0);
  } catch (err) {
    announce("capture-status", `The page was not added. ${err.message}`);
  }
}

function isTextField(target) {
  return target instanceof HTMLElement && (target.isContentEditable || target.tagName === "TEXTAREA"
    || (target.tagName === "INPUT" && !["checkbox", "radio", "button", "submit", "file"].includes(target.type)));
}

// Pasting: files and pictures are added wherever they are pasted (a text box cannot hold them); a link
// pasted outside a text box is added as a web page, other text opens "Paste a note" with it.
function onPaste(event) {
  if ($("#main").hidden || document.querySelector("dialog[open]")) return;
  const data = event.clipboardData;
  if (!data) return;
  const files = [...data.files].map(named);
  if (files.length) {
    event.preventDefault();
    addFiles(files);
    return;
  }
  if (isTextField(event.target)) return;
  const text = (data.getData("text/plain") || "").trim();
  if (!text) return;
  event.preventDefault();
  if (LINK.test(text)) {
    addLink(text);
    return;
  }
  const details = $("#note-form").closest("details");
  details.open = true;
  $("#note-text").value = text;
  $("#note-text").focus();
  announce("capture-status", "The pasted text is in “Paste a note”: add a title if you like, then Save note.");
}

function droppedLink(dt) {
  const uris = (dt.getData("text/uri-list") || "").split(/\r?\n/).filter((l) => l && !l.startsWith("#"));
  const candidate = (uris[0] || dt.getData("text/plain") || "").trim();
  return LINK.test(candidate) ? candidate : null;
}

async function addNote(event) {
  event.preventDefault();
  const text = $("#note-text").value;
  if (!text.trim()) {
    $("#note-text").focus();
    return;
  }
  try {
    const title = $("#note-title").value.trim() || null;
    const res = await api("/v1/notes", {method: "POST", json: {text, title}});
    const said = trackAccepted(await res.json(), title || "Note");
    $("#note-text").value = "";
    $("#note-title").value = "";
    announce("capture-status", said || "Note saved; progress shows below.");
    scheduleReload(0);
  } catch (err) {
    announce("capture-status", `The note was not saved. ${err.message}`);
  }
}

async function addUrl(event) {
  event.preventDefault();
  const url = $("#url").value.trim();
  if (!url) {
    $("#url").focus();
    return;
  }
  try {
    const res = await api("/v1/urls", {method: "POST", json: {url}});
    trackCapture((await res.json()).job_id, url);
    $("#url").value = "";
    announce("capture-status", `Fetching ${url}; progress shows below.`);
    scheduleReload(0);
  } catch (err) {
    announce("capture-status", `The page was not added. ${err.message}`);  // the address stays in the box
  }
}

function recordingType() {
  const types = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/webm", "audio/mp4"];
  return types.find((t) => MediaRecorder.isTypeSupported(t)) || "";
}

async function toggleRecording() {
  const button = $("#record");
  if (recorder) {
    recorder.stop();
    return;
  }
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia || !window.MediaRecorder) {
    $("#record-status").textContent = "This browser cannot record here: recording needs https:// or this computer's own address.";
    return;
  }
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({audio: true});
  } catch (err) {
    $("#record-status").textContent = `No microphone: ${err.message}`;
    return;
  }
  const type = recordingType();
  const rec = new MediaRecorder(stream, type ? {mimeType: type} : undefined);
  const chunks = [];
  const startedAt = new Date();
  const timeLabel = $("#record-time");
  const tick = () => {
    const seconds = (Date.now() - startedAt.getTime()) / 1000;
    timeLabel.dataset.seconds = seconds.toFixed(1);
    timeLabel.textContent = clock(seconds);
  };
  const timer = setInterval(tick, 250);
  rec.addEventListener("dataavailable", (e) => { if (e.data.size) chunks.push(e.data); });
  rec.addEventListener("stop", async () => {
    clearInterval(timer);
    stream.getTracks().forEach((t) => t.stop());
    recorder = null;
    button.setAttribute("aria-pressed", "false");
    button.textContent = "Record a voice note";
    const mime = (rec.mimeType || type || "audio/webm").split(";")[0];
    const ext = mime.includes("ogg") ? "ogg" : mime.includes("mp4") ? "m4a" : "webm";
    const stamp = `${dateValue(startedAt)} ${pad(startedAt.getHours())}-${pad(startedAt.getMinutes())}`;
    const file = new File(chunks, `voice-note-${stamp.replace(" ", "-")}.${ext}`, {type: mime});
    $("#record-status").textContent = `Recorded ${clock((Date.now() - startedAt.getTime()) / 1000)}; uploading…`;
    timeLabel.textContent = "";
    try {
      const accepted = await uploadFile(file, {title: `Voice note ${dateValue(startedAt)} ${pad(startedAt.getHours())}:${pad(startedAt.getMinutes())}`,
                              capturedAt: isoLocal(startedAt)});
      const said = trackAccepted(accepted, file.name);
      $("#record-status").textContent = "";
      announce("capture-status", said || "Voice note added; it is being transcribed below.");
      scheduleReload(0);
    } catch (err) {
      $("#record-status").textContent = "";
      announce("capture-status", `The voice note was not added: ${err.message}`);
    }
  });
  rec.start(1000);
  recorder = rec;
  tick();
  button.setAttribute("aria-pressed", "true");
  button.textContent = "Stop recording";
  $("#record-status").textContent = "Recording… press Stop recording when you are done.";
  announce("capture-status", "Recording started.");
}

// Files and links can be dropped anywhere on the page (the drop zone under Add says so too); a file
// dropped must never replace the page.
function setUpDropZone() {
  const zone = $("#dropzone");
  let depth = 0; // dragenter/dragleave pairs of the elements crossed
  const carries = (e) => e.dataTransfer && [...e.dataTransfer.types].some((t) => t === "Files" || t === "text/uri-list");
  const show = (on) => {
    document.body.classList.toggle("drag-over", on && !$("#main").hidden);
    zone.classList.toggle("over", on);
  };
  window.addEventListener("dragenter", (e) => {
    if (!carries(e)) return;
    depth += 1;
    show(true);
  });
  window.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (!depth) show(false);
  });
  window.addEventListener("dragover", (e) => e.preventDefault());
  window.addEventListener("drop", (e) => {
    e.preventDefault();
    depth = 0;
    show(false);
    if ($("#main").hidden || !e.dataTransfer) return;
    if (e.dataTransfer.files && e.dataTransfer.files.length) {
      addFiles(e.dataTransfer.files);
      return;
    }
    const link = droppedLink(e.dataTransfer);
    if (link) addLink(link);
  });
}

export function wireCapture() {
  $("#choose-files").addEventListener("click", () => $("#file-input").click());
  $("#file-input").addEventListener("change", (e) => {
    addFiles(e.target.files);
    e.target.value = "";
  });
  setUpDropZone();
  $("#note-form").addEventListener("submit", addNote);
  $("#url-form").addEventListener("submit", addUrl);
  $("#record").addEventListener("click", toggleRecording);
  document.addEventListener("paste", onPaste);
}
