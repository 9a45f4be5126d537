// Asking: the answer streams in as paragraphs and lists, each [n] opening its source; follow-up
// questions continue the conversation; the time range the question was understood with is shown,
// and what a follow-up took from earlier questions, with a way to ask without it.  A model's answer
// that cites none of the sources is shown as unsupported, beside what the sources do say.

import {loadConversations, onShowConversation, setOpenConversation} from "./conversations.js";
import {$, el} from "./dom.js";
import {DAY, MODALITY_LABEL, clock, formatSpan, formatWhen} from "./format.js";
import {ApiError, api, readEvents} from "./http.js";
import {state} from "./state.js";
import {editRange, rangeParams, setRange} from "./time.js";
import {citedSecond, openSource} from "./viewer.js";

const TZ = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
// How the reader writes dates ("3/12") and which holidays and seasons are theirs.
const LOCALE = navigator.language || undefined;

let asking = null; // the AbortController of the answer streaming in, if any
let turnCount = 0; // numbers each question's element id

export function newConversation() {
  if (asking) asking.abort();
  setOpenConversation(null);
  $("#thread").replaceChildren();
}

// A past conversation, shown as it was answered.
function showConversation(conversation) {
  if (asking) asking.abort();
  $("#thread").replaceChildren();
  for (const t of conversation.turns) {
    const turn = createTurn(t.question);
    if (t.meta) renderMeta(turn, t.meta);
    turn.sources = t.sources || [];
    turn.answer.setAttribute("aria-busy", "false");
    if (t.answer === null) {
      turn.el.dataset.state = "error";
      turn.extra.append(el("p", {class: "muted"}, "This question was not answered (stopped, or it failed)."));
    } else {
      finish(turn, t, {followUpHint: false});
    }
  }
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
  const carried = meta.carried_over;
  if (carried) {
    const what = [carried.subject, carried.time].filter(Boolean).map((x) => `“${x}”`).join(" and ") || "the subject";
    box.append(el("span", {class: "carried", title: carried.why || ""}, `Took ${what} from your last question`),
               el("button", {type: "button", class: "ask-fresh",
                             "aria-label": `Ask without it: “${turn.question}” afresh, without ${what}`,
                             onclick: () => ask(turn.question, {fresh: true})}, "Ask without it"));
  }
  if (meta.note) box.append(el("span", {}, meta.note));
}

// A model's answer that cites none of the sources: said plainly, with what the sources do say beside it.
function unsupportedState(turn, done) {
  const box = el("div", {class: "unsupported", role: "note", "aria-label": "Not supported by your data"},
    el("h3", {}, "Not supported by your data"),
    el("p", {}, "The model's answer cites none of your sources, so it may be wrong or made up. "
                + "Do not rely on it."));
  if (done.extractive) {
    const quoted = el("div", {class: "quoted"});
    renderAnswer(quoted, done.extractive.answer, turn.sources);
    box.append(el("p", {class: "quoted-label"}, "What your data says:"), quoted);
  } else {
    box.append(el("p", {}, "None of the passages found answers it."));
  }
  const modelSaid = el("div", {class: "model-said"});
  renderAnswer(modelSaid, done.answer, turn.sources);
  turn.answer.replaceChildren(box, el("details", {class: "model-answer"},
    el("summary", {}, "What the model wrote (unsupported)"), modelSaid));
  const cited = done.extractive ? done.extractive.citations : [];
  if (cited.length) renderSources(turn, cited);
  else if (turn.sources.length) {
    turn.extra.append(el("details", {class: "more-sources"},
      el("summary", {}, "Closest passages (they do not answer it)"),
      renderSourceList(turn, turn.sources, "Closest passages")));
  }
}

// How an answer ends: an honest empty state, an unsupported answer flagged, or the cited answer.
function finish(turn, done, {followUpHint = true} = {}) {
  if (done.unsupported) {
    turn.el.dataset.state = "unsupported";
    unsupportedState(turn, done);
  } else if (done.grounded === false) {
    turn.el.dataset.state = "empty";
    emptyState(turn, done);
  } else {
    turn.el.dataset.state = "done";
    turn.text = done.answer;
    renderAnswer(turn.answer, turn.text, turn.sources);
    renderSources(turn, done.citations || []);
    if (followUpHint) {
      turn.extra.append(el("p", {class: "muted small"}, "Ask a follow-up below; it continues this conversation."));
    }
  }
}

function createTurn(question) {
  turnCount += 1;
  const id = `turn-${turnCount}`;
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

function setAsking(on) {
  $("#ask-button").disabled = on;
  $("#stop-button").hidden = !on;
}

async function ask(question, {fresh = false} = {}) {
  if (asking) asking.abort();
  const turn = createTurn(question);
  const body = {question, tz: TZ, locale: LOCALE, ...rangeParams()};
  if (state.conversationId) body.conversation_id = state.conversationId;
  if (fresh) body.fresh = true;
  const controller = new AbortController();
  asking = controller;
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
        setOpenConversation(data.conversation_id);
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
        finish(turn, data);
        loadConversations(); // it is listed (first) once answered
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
    if (asking === controller) {
      asking = null;
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

export function wireAsking() {
  onShowConversation(showConversation, newConversation);
  $("#ask-form").addEventListener("submit", onAsk);
  $("#question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("#ask-form").requestSubmit();
    }
  });
  $("#stop-button").addEventListener("click", () => asking && asking.abort());
  $("#new-conversation").addEventListener("click", () => {
    newConversation();
    $("#question").focus();
  });
}
