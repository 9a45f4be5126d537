// secondbrain web app: sign in, ask with cited answers, capture, and watch sources.
//
// No framework and no build step.  Every call goes to this origin's HTTP API with the user's key
// in an Authorization header; server-sent events (answers, job progress) are read from fetch()
// response streams, because EventSource cannot send that header.  Raw files are fetched the same
// way and shown from blob: URLs.

const $ = (selector, root = document) => root.querySelector(selector);

const KEY_NAME = "secondbrain.key";
const TZ = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const FINAL = new Set(["succeeded", "failed", "duplicate"]);
const MAX_STREAMS = 3; // browsers allow ~6 connections per host over HTTP/1.1: leave room for the rest
const STATUS_LABEL = {queued: "Waiting", running: "Processing", succeeded: "Ready", failed: "Failed",
                      duplicate: "Already added"};
const STAGE_LABEL = {fetch: "fetch page", extract: "read", chunk: "split", embed: "index"};
const STAGE_STATE = {pending: "waiting", running: "working", retrying: "retrying", succeeded: "done",
                     failed: "failed", skipped: "skipped"};
const MODALITY_LABEL = {pdf: "PDF", web: "Web page", audio: "Recording", image: "Image", note: "Note",
                        markdown: "Markdown", text: "Text", office: "Document"};

const state = {
  key: null,
  me: null,
  range: {kind: "all", from: null, to: null},
  conversationId: null,
  asking: null,
  streams: new Map(),
  waiting: [],
  blobUrls: [],
  opener: null,
  recorder: null,
  reloadTimer: null,
  turnCount: 0,
};

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// ------------------------------------------------------------------ HTTP

function authHeaders(key = state.key) {
  return key ? {Authorization: `Bearer ${key}`} : {};
}

async function errorText(res) {
  try {
    const body = await res.json();
    if (typeof body.detail === "string") return body.detail;
    if (Array.isArray(body.detail)) return body.detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
    return JSON.stringify(body);
  } catch {
    return res.statusText || `HTTP ${res.status}`;
  }
}

async function api(path, {method = "GET", json, signal} = {}) {
  const headers = authHeaders();
  let body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(json);
  }
  const res = await fetch(path, {method, headers, body, signal});
  if (res.status === 401) {
    showSignIn("Your key was not accepted (it may have been revoked). Sign in again.");
  }
  if (!res.ok) throw new ApiError(res.status, await errorText(res));
  return res;
}

// Server-sent events from a fetch() response: yields {event, data} per message.
async function* readEvents(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += value;
    // Normalise line ends, keeping a trailing \r until we know whether \n follows it.
    const keep = buffer.endsWith("\r") ? "\r" : "";
    buffer = buffer.slice(0, buffer.length - keep.length).replace(/\r\n?/g, "\n") + keep;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (field === "event") event = text;
        else if (field === "data") data.push(text);
      }
      if (data.length) yield {event, data: data.join("\n")};
    }
  }
}

// ------------------------------------------------------------------ small helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function announce(id, message) {
  const region = document.getElementById(id);
  region.textContent = "";
  // Cleared first, so the same message is announced again.
  setTimeout(() => { region.textContent = message; }, 50);
}

function pad(n) {
  return String(n).padStart(2, "0");
}

function isoLocal(d) {
  const offset = -d.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  const abs = Math.abs(offset);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:` +
    `${pad(d.getMinutes())}:${pad(d.getSeconds())}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

function dateValue(d) {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function parseDateValue(value) {
  const [y, m, d] = value.split("-").map(Number);
  return new Date(y, m - 1, d);
}

function startOfDay(d) {
  return new Date(d.getFullYear(), d.getMonth(), d.getDate());
}

function addDays(d, n) {
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + n);
}

const DAY = new Intl.DateTimeFormat(undefined, {weekday: "short", day: "numeric", month: "short", year: "numeric"});
const WHEN = new Intl.DateTimeFormat(undefined, {day: "numeric", month: "short", year: "numeric",
                                                 hour: "2-digit", minute: "2-digit"});

function formatWhen(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : WHEN.format(d);
}

function formatSpan(from, to) {
  // [from, to) shown with an inclusive last day
  const last = addDays(startOfDay(new Date(to.getTime() - 1)), 0);
  const first = startOfDay(from);
  return first.getTime() === last.getTime() ? DAY.format(first) : `${DAY.format(first)} – ${DAY.format(last)}`;
}

function clock(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

// ------------------------------------------------------------------ signing in

function storedKey() {
  return sessionStorage.getItem(KEY_NAME) || localStorage.getItem(KEY_NAME);
}

async function whoAmI(key) {
  const res = await fetch("/v1/me", {headers: authHeaders(key)});
  if (res.status === 401 || res.status === 403) return {ok: false, message: await errorText(res)};
  if (!res.ok) throw new ApiError(res.status, await errorText(res));
  return {ok: true, me: await res.json()};
}

function showSignIn(message = "", {canCancel = false} = {}) {
  stopAllStreams();
  $("#main").hidden = true;
  $("#sections").hidden = true;
  $("#signin").hidden = false;
  $("#signin-cancel").hidden = !canCancel;
  $("#signin-open").hidden = true;
  $("#signout").hidden = true;
  $("#who").textContent = "";
  $("#signin-error").textContent = message;
  $("#key").value = "";
  $("#key").focus();
}

function showApp(me, {focus = false} = {}) {
  state.me = me;
  $("#signin").hidden = true;
  $("#main").hidden = false;
  $("#sections").hidden = false;
  const scope = me.scope === "admin" ? ", admin" : "";
  $("#who").textContent = me.key_id
    ? `Signed in as ${me.user_id}${scope}`
    : `Using ${me.user_id} on this computer (no key needed here)`;
  $("#signin-open").hidden = Boolean(me.key_id);
  $("#signout").hidden = !me.key_id;
  loadSources();
  if (focus) $("#question").focus();
}

async function signIn(event) {
  event.preventDefault();
  const key = $("#key").value.trim();
  if (!key) {
    $("#signin-error").textContent = "Paste your API key first.";
    $("#key").focus();
    return;
  }
  try {
    const result = await whoAmI(key);
    if (!result.ok) {
      $("#signin-error").textContent = `That key was not accepted: ${result.message}`;
      $("#key").select();
      return;
    }
    sessionStorage.removeItem(KEY_NAME);
    localStorage.removeItem(KEY_NAME);
    ($("#remember").checked ? localStorage : sessionStorage).setItem(KEY_NAME, key);
    state.key = key;
    newConversation();
    showApp(result.me, {focus: true});
  } catch (err) {
    $("#signin-error").textContent = `Could not reach secondbrain: ${err.message}`;
  }
}

async function signOut() {
  sessionStorage.removeItem(KEY_NAME);
  localStorage.removeItem(KEY_NAME);
  state.key = null;
  newConversation();
  $("#source-list").replaceChildren();
  let keyless = false;
  try {
    keyless = (await whoAmI(null)).ok;
  } catch {
    keyless = false;
  }
  showSignIn("Signed out.", {canCancel: keyless});
}

async function cancelSignIn() {
  const result = await whoAmI(state.key);
  if (result.ok) showApp(result.me, {focus: true});
}

// ------------------------------------------------------------------ time filter

function rangeFor(kind) {
  const today = startOfDay(new Date());
  if (kind === "today") return {from: today, to: addDays(today, 1)};
  if (kind === "week") {
    const monday = addDays(today, -((today.getDay() + 6) % 7));
    return {from: monday, to: addDays(monday, 7)};
  }
  if (kind === "month") {
    return {from: new Date(today.getFullYear(), today.getMonth(), 1),
            to: new Date(today.getFullYear(), today.getMonth() + 1, 1)};
  }
  return {from: null, to: null};
}

function setRange(kind, from = null, to = null) {
  state.range = kind === "custom" ? {kind, from, to} : {kind, ...rangeFor(kind)};
  for (const chip of document.querySelectorAll(".chip")) {
    chip.setAttribute("aria-pressed", String(chip.dataset.range === kind));
  }
  $("#custom-range").hidden = kind !== "custom";
  const {from: f, to: t} = state.range;
  const names = {all: "All time", today: "Today", week: "This week", month: "This month", custom: "Custom range"};
  $("#time-summary").textContent = f && t
    ? `${names[kind]}: ${formatSpan(f, t)}. Questions and the source list only look here.`
    : kind === "custom" ? "Choose the first and last day, then apply."
    : "Questions and the source list look at everything.";
  if (kind !== "custom" || (f && t)) loadSources();
}

function onChip(event) {
  const kind = event.currentTarget.dataset.range;
  if (kind === "custom") {
    // Start from the range in force (or this week), ready to be adjusted.
    const {from, to} = state.range.from ? state.range : rangeFor("week");
    $("#range-from").value = dateValue(from);
    $("#range-to").value = dateValue(addDays(to, -1));
    setRange("custom", from, to);
    $("#range-from").focus();
    return;
  }
  setRange(kind);
}

function applyCustomRange(event) {
  event.preventDefault();
  const a = $("#range-from").value;
  const b = $("#range-to").value;
  if (!a || !b) {
    $("#time-summary").textContent = "Choose both days.";
    return;
  }
  let from = parseDateValue(a);
  let last = parseDateValue(b);
  if (last < from) [from, last] = [last, from];
  setRange("custom", from, addDays(last, 1));
}

function rangeParams() {
  const {from, to} = state.range;
  return from && to ? {from: isoLocal(from), to: isoLocal(to)} : {};
}

// Fill the custom range with a range the server understood, ready to be adjusted and asked again.
function editRange(start, end, question) {
  const from = start ? new Date(start) : new Date(2000, 0, 1);
  const to = end ? new Date(end) : addDays(startOfDay(new Date()), 1);
  $("#range-from").value = dateValue(from);
  $("#range-to").value = dateValue(new Date(to.getTime() - 1));
  setRange("custom", startOfDay(from), addDays(startOfDay(new Date(to.getTime() - 1)), 1));
  $("#question").value = question;
  $("#range-from").focus();
  $("#time-summary").textContent += " Adjust the days if you like, apply, then ask again (your question is back in the box).";
}

// ------------------------------------------------------------------ asking

function newConversation() {
  if (state.asking) state.asking.abort();
  state.conversationId = null;
  $("#thread").replaceChildren();
}

function sourceWhere(src) {
  const parts = [MODALITY_LABEL[src.modality] || src.modality];
  if (src.page !== null && src.page !== undefined) parts.push(`page ${src.page}`);
  const second = citedSecond(src);
  if (second !== null) parts.push(src.position ? `${src.position}` : `at ${clock(second)}`);
  if (src.heading_path && src.heading_path.length) parts.push(src.heading_path.join(" › "));
  if (src.captured_at_local || src.captured_at) parts.push(`captured ${formatWhen(src.captured_at_local || src.captured_at)}`);
  return parts.join(" · ");
}

function citedSecond(src) {
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

// The answer as paragraphs and bullet lists, each [n] a button opening source n.
function renderAnswer(container, text, sources) {
  const byNumber = new Map(sources.map((s) => [s.n, s]));
  const inline = (line) => line.split(/(\[\d{1,3}\])/).map((part) => {
    const m = /^\[(\d{1,3})\]$/.exec(part);
    const src = m && byNumber.get(Number(m[1]));
    if (!src) return part;
    return el("button", {type: "button", class: "cite", dataset: {n: String(src.n)},
                         "aria-label": `Source ${src.n}: ${src.title || "untitled"}, ${sourceWhere(src)}`,
                         onclick: (e) => openSource(src, e.currentTarget)}, `[${src.n}]`);
  });
  const nodes = [];
  let list = null;
  for (const line of text.split("\n")) {
    const bullet = /^\s*[-*•]\s+(.*)$/.exec(line);
    if (bullet) {
      if (!list) nodes.push(list = el("ul"));
      list.append(el("li", {}, inline(bullet[1])));
    } else if (line.trim()) {
      list = null;
      nodes.push(el("p", {}, inline(line)));
    }
  }
  container.replaceChildren(...nodes);
}

function renderSourceList(turn, sources, label) {
  const items = sources.map((src) => el("li", {},
    el("button", {type: "button", class: "source-open", dataset: {n: String(src.n)},
                  onclick: (e) => openSource(src, e.currentTarget)},
       el("span", {class: "src-title"}, `[${src.n}] ${src.title || "Untitled"}`),
       el("span", {class: "src-where"}, sourceWhere(src)),
       src.snippet ? el("span", {class: "src-snippet"}, src.snippet) : null)));
  return el("ol", {class: "turn-sources", "aria-label": `${label}: ${turn.question}`}, items);
}

// The cited sources in view; the others retrieved, one click away.
function renderSources(turn, cited) {
  const used = turn.sources.filter((s) => cited.includes(s.n));
  const others = turn.sources.filter((s) => !cited.includes(s.n));
  if (used.length) turn.extra.append(renderSourceList(turn, used, "Cited sources"));
  if (others.length) {
    turn.extra.append(el("details", {class: "more-sources"},
      el("summary", {}, `${others.length} more passage${others.length === 1 ? "" : "s"} looked at`),
      renderSourceList(turn, others, "Other passages")));
  }
}

function renderMeta(turn, meta) {
  const box = turn.meta;
  box.replaceChildren();
  const range = meta.time_range;
  if (range && (range.start || range.end)) {
    const start = range.start ? new Date(range.start) : null;
    const end = range.end ? new Date(range.end) : null;
    let described = meta.understood && meta.understood.description;
    if (!described) {
      described = start && end ? formatSpan(start, end)
        : start ? `since ${DAY.format(start)}` : `until ${DAY.format(new Date(end.getTime() - 1))}`;
    }
    const field = range.field === "ingested_at" ? " (when added)" : "";
    const expression = meta.understood && meta.understood.expression;
    const origin = range.source === "question" ? `Time understood${expression ? ` from “${expression}”` : ""}` : "Time";
    box.append(el("span", {class: "understood-range"}, `${origin}: ${described}${field}`),
               el("button", {type: "button", class: "edit-range",
                             "aria-label": `Change the time range (${described}) and ask again`,
                             onclick: () => editRange(range.start, range.end, turn.question)},
                  "Change range"));
  } else if (meta.recency_boost) {
    const expr = meta.understood && meta.understood.expression;
    box.append(el("span", {}, `Recent items first${expr ? ` (“${expr}”)` : ""}`));
  } else {
    box.append(el("span", {}, "Any time"));
  }
  if (meta.standalone_question) box.append(el("span", {}, `Understood as: “${meta.standalone_question}”`));
  if (meta.note) box.append(el("span", {}, meta.note));
}

function createTurn(question) {
  state.turnCount += 1;
  const id = `turn-${state.turnCount}`;
  const meta = el("div", {class: "meta"});
  const answer = el("div", {class: "answer", "aria-live": "polite", "aria-busy": "true"});
  const extra = el("div", {class: "extra"});
  const article = el("article", {class: "turn", id, "aria-labelledby": `${id}-q`, dataset: {state: "streaming"}},
                     el("p", {class: "q", id: `${id}-q`}, question), meta, answer, extra);
  $("#thread").append(article);
  article.scrollIntoView({block: "nearest"});
  return {question, el: article, meta, answer, extra, sources: [], text: "", tokens: 0, frame: 0};
}

function emptyState(turn, done) {
  const active = state.range.from && state.range.to;
  const hint = active
    ? "Only the chosen time range was searched. Try All time, other words, or add the source first."
    : "Try other words, or add the source first (Add, above).";
  const box = el("div", {class: "empty-state"},
    el("h3", {}, "Nothing found"),
    el("p", {}, done.answer || "I could not find anything about that in your data."),
    el("p", {class: "muted"}, hint));
  if (active) {
    box.append(el("button", {type: "button", onclick: () => { setRange("all"); ask(turn.question); }},
                  "Ask again over all time"));
  }
  turn.answer.replaceChildren(box);
  if (turn.sources.length) {
    turn.extra.append(el("details", {class: "more-sources"},
      el("summary", {}, "Closest passages (they do not answer it)"),
      renderSourceList(turn, turn.sources, "Closest passages")));
  }
}

function setAsking(asking) {
  $("#ask-button").disabled = asking;
  $("#stop-button").hidden = !asking;
}

async function ask(question) {
  if (state.asking) state.asking.abort();
  const turn = createTurn(question);
  const body = {question, tz: TZ, ...rangeParams()};
  if (state.conversationId) body.conversation_id = state.conversationId;
  const controller = new AbortController();
  state.asking = controller;
  setAsking(true);
  const render = () => {
    turn.frame = 0;
    renderAnswer(turn.answer, turn.text, turn.sources);
  };
  try {
    const res = await api("/v1/ask", {method: "POST", json: body, signal: controller.signal});
    for await (const message of readEvents(res)) {
      const data = JSON.parse(message.data);
      if (message.event === "meta") {
        state.conversationId = data.conversation_id;
        renderMeta(turn, data);
      } else if (message.event === "sources") {
        turn.sources = data;
      } else if (message.event === "token") {
        turn.text += data.text;
        turn.tokens += 1;
        turn.el.dataset.tokens = String(turn.tokens);
        if (!turn.frame) turn.frame = requestAnimationFrame(render);
      } else if (message.event === "done") {
        if (turn.frame) cancelAnimationFrame(turn.frame);
        turn.answer.setAttribute("aria-busy", "false");
        if (data.grounded === false) {
          turn.el.dataset.state = "empty";
          emptyState(turn, data);
        } else {
          turn.el.dataset.state = "done";
          turn.text = data.answer;
          render();
          renderSources(turn, data.citations || []);
          turn.extra.append(el("p", {class: "muted small"}, "Ask a follow-up below; it continues this conversation."));
        }
      } else if (message.event === "error") {
        throw new ApiError(0, data.message);
      }
    }
    if (turn.el.dataset.state === "streaming") throw new ApiError(0, "the answer stopped before it finished");
  } catch (err) {
    if (turn.frame) cancelAnimationFrame(turn.frame);
    turn.answer.setAttribute("aria-busy", "false");
    turn.el.dataset.state = "error";
    const message = err.name === "AbortError" ? "Stopped." : `The answer failed: ${err.message}`;
    turn.extra.append(el("p", {class: "error", role: "alert"}, message));
  } finally {
    if (state.asking === controller) {
      state.asking = null;
      setAsking(false);
    }
  }
}

function onAsk(event) {
  event.preventDefault();
  const question = $("#question").value.trim();
  if (!question) {
    $("#question").focus();
    return;
  }
  $("#question").value = "";
  ask(question);
}

// ------------------------------------------------------------------ opening a citation

function revokeBlobs() {
  for (const url of state.blobUrls) URL.revokeObjectURL(url);
  state.blobUrls = [];
}

async function fetchRaw(link, modality) {
  const path = link.split("#")[0];
  const res = await fetch(path, {headers: authHeaders()});
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
  state.blobUrls.push(url);
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

async function openSource(src, opener) {
  const dialog = $("#viewer");
  const body = $("#viewer-body");
  revokeBlobs();
  state.opener = opener || document.activeElement;
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
  const passage = [el("h3", {class: "small-title"}, passageLabel), el("blockquote", {class: "passage"}, src.snippet || "")];
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

  if (src.modality === "web" || !src.link) {
    media.replaceChildren();
    return;
  }
  try {
    const url = await fetchRaw(src.link, src.modality);
    if (src.modality === "pdf") {
      const target = page !== null ? `${url}#page=${page}` : url;
      media.replaceChildren(
        el("iframe", {src: target, title: `${src.title || "PDF"}${page !== null ? `, page ${page}` : ""}`}),
        el("p", {class: "small"}, el("a", {href: target, target: "_blank", rel: "noopener"}, "Open the PDF in a new tab")));
    } else if (src.modality === "audio") {
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
    media.replaceChildren(el("p", {class: "error"}, `The original could not be shown: ${err.message}`));
  }
}

function closeViewer() {
  $("#viewer").close();
}

function onViewerClosed() {
  for (const media of document.querySelectorAll("#viewer audio")) media.pause();
  $("#viewer-body").replaceChildren();
  revokeBlobs();
  if (state.opener && document.contains(state.opener)) state.opener.focus();
}

// ------------------------------------------------------------------ capturing

function uploadFile(file, {title = null, capturedAt = null} = {}) {
  const progress = el("progress", {max: "1", value: "0", "aria-label": `Uploading ${file.name}`});
  const item = el("li", {}, el("span", {}, `Uploading ${file.name}`), progress);
  $("#uploads").append(item);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/artifacts");
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.responseType = "json";
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) progress.value = e.loaded / e.total;
    });
    xhr.addEventListener("load", () => {
      item.remove();
      if (xhr.status === 202) resolve(xhr.response);
      else reject(new ApiError(xhr.status, (xhr.response && xhr.response.detail) || xhr.statusText));
    });
    xhr.addEventListener("error", () => {
      item.remove();
      reject(new ApiError(0, "the connection failed"));
    });
    const form = new FormData();
    if (title) form.append("title", title);
    if (capturedAt) form.append("captured_at", capturedAt);
    form.append("file", file, file.name);
    xhr.send(form);
  });
}

async function addFiles(files) {
  const list = [...files];
  if (!list.length) return;
  let added = 0;
  const failures = [];
  for (const file of list) {
    try {
      await uploadFile(file);
      added += 1;
      scheduleReload(0);
    } catch (err) {
      failures.push(`${file.name}: ${err.message}`);
    }
  }
  const message = [added ? `Added ${added} file${added === 1 ? "" : "s"}; progress shows under Sources.` : "",
                   failures.length ? `Not added: ${failures.join("; ")}` : ""].filter(Boolean).join(" ");
  announce("capture-status", message);
}

async function addNote(event) {
  event.preventDefault();
  const text = $("#note-text").value;
  if (!text.trim()) {
    $("#note-text").focus();
    return;
  }
  try {
    await api("/v1/notes", {method: "POST", json: {text, title: $("#note-title").value.trim() || null}});
    $("#note-text").value = "";
    $("#note-title").value = "";
    announce("capture-status", "Note saved; progress shows under Sources.");
    scheduleReload(0);
  } catch (err) {
    announce("capture-status", `The note was not saved: ${err.message}`);
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
    await api("/v1/urls", {method: "POST", json: {url}});
    $("#url").value = "";
    announce("capture-status", `Fetching ${url}; progress shows under Sources.`);
    scheduleReload(0);
  } catch (err) {
    announce("capture-status", `The page was not added: ${err.message}`);
  }
}

function recordingType() {
  const types = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/webm", "audio/mp4"];
  return types.find((t) => MediaRecorder.isTypeSupported(t)) || "";
}

async function toggleRecording() {
  const button = $("#record");
  if (state.recorder) {
    state.recorder.stop();
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
  const recorder = new MediaRecorder(stream, type ? {mimeType: type} : undefined);
  const chunks = [];
  const startedAt = new Date();
  const timeLabel = $("#record-time");
  const tick = () => {
    const seconds = (Date.now() - startedAt.getTime()) / 1000;
    timeLabel.dataset.seconds = seconds.toFixed(1);
    timeLabel.textContent = clock(seconds);
  };
  const timer = setInterval(tick, 250);
  recorder.addEventListener("dataavailable", (e) => { if (e.data.size) chunks.push(e.data); });
  recorder.addEventListener("stop", async () => {
    clearInterval(timer);
    stream.getTracks().forEach((t) => t.stop());
    state.recorder = null;
    button.setAttribute("aria-pressed", "false");
    button.textContent = "Record a voice note";
    const mime = (recorder.mimeType || type || "audio/webm").split(";")[0];
    const ext = mime.includes("ogg") ? "ogg" : mime.includes("mp4") ? "m4a" : "webm";
    const stamp = `${dateValue(startedAt)} ${pad(startedAt.getHours())}-${pad(startedAt.getMinutes())}`;
    const file = new File(chunks, `voice-note-${stamp.replace(" ", "-")}.${ext}`, {type: mime});
    $("#record-status").textContent = `Recorded ${clock((Date.now() - startedAt.getTime()) / 1000)}; uploading…`;
    timeLabel.textContent = "";
    try {
      await uploadFile(file, {title: `Voice note ${dateValue(startedAt)} ${pad(startedAt.getHours())}:${pad(startedAt.getMinutes())}`,
                              capturedAt: isoLocal(startedAt)});
      $("#record-status").textContent = "";
      announce("capture-status", "Voice note added; it is transcribed under Sources.");
      scheduleReload(0);
    } catch (err) {
      $("#record-status").textContent = "";
      announce("capture-status", `The voice note was not added: ${err.message}`);
    }
  });
  recorder.start(1000);
  state.recorder = recorder;
  tick();
  button.setAttribute("aria-pressed", "true");
  button.textContent = "Stop recording";
  $("#record-status").textContent = "Recording… press Stop recording when you are done.";
  announce("capture-status", "Recording started.");
}

function setUpDropZone() {
  const zone = $("#dropzone");
  const over = (on) => (e) => {
    e.preventDefault();
    zone.classList.toggle("over", on);
  };
  zone.addEventListener("dragenter", over(true));
  zone.addEventListener("dragover", over(true));
  zone.addEventListener("dragleave", over(false));
  zone.addEventListener("drop", (e) => {
    over(false)(e);
    addFiles(e.dataTransfer ? e.dataTransfer.files : []);
  });
  // A file dropped beside the zone must not replace the page.
  window.addEventListener("dragover", (e) => e.preventDefault());
  window.addEventListener("drop", (e) => e.preventDefault());
}

// ------------------------------------------------------------------ sources

function scheduleReload(delay = 400) {
  clearTimeout(state.reloadTimer);
  state.reloadTimer = setTimeout(loadSources, delay);
}

function stageText(stages) {
  return stages.map((s) => `${STAGE_LABEL[s.stage] || s.stage}: ${STAGE_STATE[s.status] || s.status}`).join(" · ");
}

function progressOf(stages) {
  const done = stages.filter((s) => s.status === "succeeded" || s.status === "skipped").length;
  return {done, total: Math.max(stages.length, 1)};
}

function sourceRow(s) {
  const title = s.title || s.source_uri || "Untitled";
  const final = FINAL.has(s.status);
  const facts = el("div", {class: "facts"},
    s.modality ? el("span", {class: "badge"}, MODALITY_LABEL[s.modality] || s.modality) : null,
    s.captured_at ? el("span", {}, "Captured ", el("time", {datetime: s.captured_at}, formatWhen(s.captured_at))) : null,
    el("span", {class: `state ${s.status}`}, STATUS_LABEL[s.status] || s.status),
    s.status === "succeeded" && s.chunk_count !== null ? el("span", {}, `${s.chunk_count} passage${s.chunk_count === 1 ? "" : "s"}`) : null);
  const progress = el("progress", {max: "3", value: "0", "aria-label": `Progress of ${title}`, hidden: final});
  const stages = el("div", {class: "stages", hidden: final});
  const remove = el("button", {type: "button", class: "delete", "aria-label": `Delete ${title}`,
                               disabled: !s.source_id, onclick: (e) => confirmDelete(s, title, e.currentTarget)},
                    "Delete");
  return el("li", {class: "source", dataset: {jobId: s.job_id || "", sourceId: s.source_id || "", status: s.status,
                                            modality: s.modality || ""}},
    el("span", {class: "title"}, title), facts, progress, stages,
    s.error ? el("p", {class: "err"}, s.error) : null,
    el("div", {class: "actions"}, remove));
}

async function loadSources() {
  if ($("#main").hidden) return;
  clearTimeout(state.reloadTimer);
  const params = new URLSearchParams({limit: "100", ...rangeParams()});
  const type = $("#type-filter").value;
  if (type) params.set("modality", type);
  try {
    const res = await api(`/v1/sources?${params}`);
    const {sources} = await res.json();
    // One row per source: the newest submission of each (earlier versions stay in its history).
    const seen = new Set();
    const rows = sources.filter((s) => {
      const key = s.source_id || s.job_id;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    // Keep the keyboard focus on the same row's button across the refresh.
    const focused = document.activeElement && document.activeElement.closest(".source .actions");
    const focusedJob = focused ? focused.closest(".source").dataset.jobId : null;
    $("#source-list").replaceChildren(...rows.map(sourceRow));
    if (focusedJob) {
      const again = document.querySelector(`.source[data-job-id="${CSS.escape(focusedJob)}"] .delete`);
      if (again) again.focus();
    }
    const filtered = type || state.range.from;
    const more = sources.length >= 100 ? " Showing the newest; narrow the time or type to see older ones." : "";
    $("#sources-summary").textContent = rows.length
      ? `${rows.length} source${rows.length === 1 ? "" : "s"}${filtered ? " match the filters" : ""}.${more}`
      : filtered ? "Nothing matches these filters." : "Nothing yet: add a file, a note, a page or a voice note.";
    for (const s of rows) if (!FINAL.has(s.status) && s.job_id) watchJob(s.job_id);
  } catch (err) {
    if (err.status !== 401) $("#sources-summary").textContent = `The sources could not be loaded: ${err.message}`;
  }
}

function onJob(job) {
  const row = document.querySelector(`.source[data-job-id="${CSS.escape(job.job_id)}"]`);
  const name = job.title || job.source_uri || "A source";
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
      : `failed: ${job.error || "unknown error"}`;
    announce("job-status", `${name} ${said}.`);
    scheduleReload();
  }
}

function watchJob(jobId) {
  if (state.streams.has(jobId) || state.waiting.includes(jobId)) return;
  if (state.streams.size >= MAX_STREAMS) {
    state.waiting.push(jobId);
    return;
  }
  const controller = new AbortController();
  state.streams.set(jobId, controller);
  (async () => {
    try {
      const res = await api(`/v1/jobs/${encodeURIComponent(jobId)}/stream`, {signal: controller.signal});
      for await (const message of readEvents(res)) {
        if (message.event === "job") onJob(JSON.parse(message.data));
      }
    } catch (err) {
      if (err.name !== "AbortError" && err.status !== 404) scheduleReload(3000); // try again shortly
    } finally {
      state.streams.delete(jobId);
      const next = state.waiting.shift();
      if (next) watchJob(next);
    }
  })();
}

function stopAllStreams() {
  for (const controller of state.streams.values()) controller.abort();
  state.streams.clear();
  state.waiting = [];
}

async function confirmDelete(source, title, button) {
  const dialog = $("#confirm-delete");
  $("#confirm-title").textContent = `Delete “${title}”?`;
  $("#confirm-text").textContent = "It is removed with every version, its indexed passages and its original "
    + "file. This cannot be undone.";
  dialog.returnValue = "";
  dialog.showModal();
  await new Promise((resolve) => dialog.addEventListener("close", resolve, {once: true}));
  if (dialog.returnValue !== "delete") {
    button.focus();
    return;
  }
  try {
    await api(`/v1/sources/${encodeURIComponent(source.source_id)}`, {method: "DELETE"});
    announce("job-status", `Deleted ${title}.`);
    const row = button.closest(".source");
    if (row) row.remove();
    $("#sources-title").setAttribute("tabindex", "-1");
    $("#sources-title").focus();
    scheduleReload(0);
  } catch (err) {
    announce("job-status", `${title} was not deleted: ${err.message}`);
    button.focus();
  }
}

// ------------------------------------------------------------------ start

function wire() {
  $("#signin-form").addEventListener("submit", signIn);
  $("#signin-open").addEventListener("click", () => showSignIn("", {canCancel: true}));
  $("#signin-cancel").addEventListener("click", cancelSignIn);
  $("#signout").addEventListener("click", signOut);
  for (const chip of document.querySelectorAll(".chip")) chip.addEventListener("click", onChip);
  $("#custom-range").addEventListener("submit", applyCustomRange);
  $("#ask-form").addEventListener("submit", onAsk);
  $("#question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("#ask-form").requestSubmit();
    }
  });
  $("#stop-button").addEventListener("click", () => state.asking && state.asking.abort());
  $("#new-conversation").addEventListener("click", () => {
    newConversation();
    $("#question").focus();
  });
  $("#choose-files").addEventListener("click", () => $("#file-input").click());
  $("#file-input").addEventListener("change", (e) => {
    addFiles(e.target.files);
    e.target.value = "";
  });
  setUpDropZone();
  $("#note-form").addEventListener("submit", addNote);
  $("#url-form").addEventListener("submit", addUrl);
  $("#record").addEventListener("click", toggleRecording);
  $("#type-filter").addEventListener("change", () => loadSources());
  $("#refresh-sources").addEventListener("click", () => loadSources());
  $("#viewer-close").addEventListener("click", closeViewer);
  $("#viewer").addEventListener("close", onViewerClosed);
}

async function start() {
  wire();
  setRange("all");
  state.key = storedKey();
  try {
    const result = await whoAmI(state.key);
    if (result.ok) {
      showApp(result.me);
    } else {
      state.key = null;
      showSignIn(storedKey() ? "The saved key was not accepted; paste a current one." : "");
    }
  } catch (err) {
    showSignIn(`Could not reach secondbrain: ${err.message}`);
  }
  document.body.dataset.ready = "true";
}

start();
