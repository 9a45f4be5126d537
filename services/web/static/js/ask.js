// Asking: the answer streams in (Markdown shown safely, each [n] opening its source); follow-up
// questions continue the conversation; the time range the question was understood with is shown,
// and what a follow-up took from earlier questions, with a way to ask without it.  A model's answer
// that cites none of the sources is shown as unsupported, beside what the sources do say.  Each
// answer and each cited passage can be copied; an answer can be regenerated and a question edited
// and sent again (the conversation keeps both, marked); a request that fails keeps the question and
// offers Retry.  "/" or Ctrl+K goes to the question box, Escape leaves it.

import {loadConversations, onShowConversation, setOpenConversation} from "./conversations.js";
import {$, announce, copyButton, el} from "./dom.js";
import {DAY, MODALITY_LABEL, clock, formatSpan, formatWhen} from "./format.js";
import {ApiError, api, readEvents} from "./http.js";
import {renderMarkdown} from "./markdown.js";
import {state} from "./state.js";
import {editRange, rangeParams, setRange} from "./time.js";
import {citedSecond, openSource} from "./viewer.js";

const TZ = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
// How the reader writes dates ("3/12") and which holidays and seasons are theirs.
const LOCALE = navigator.language || undefined;
const REVISED = {regenerate: "Regenerated", edit: "Edited"};

let asking = null; // the AbortController of the answer streaming in, if any
let turnCount = 0; // numbers each question's element id

export function newConversation() {
  if (asking) asking.abort();
  setOpenConversation(null);
  $("#thread").replaceChildren();
}

// A past conversation, shown as it was answered (a revised question marked on both of its turns).
function showConversation(conversation) {
  if (asking) asking.abort();
  $("#thread").replaceChildren();
  const shown = [];
  for (const t of conversation.turns) {
    const revises = t.meta && t.meta.revises;
    const turn = createTurn(t.question, {revises});
    if (revises) markRevised(shown, revises);
    shown.push(turn);
    if (t.meta) renderMeta(turn, t.meta);
    turn.sources = t.sources || [];
    turn.answer.setAttribute("aria-busy", "false");
    if (t.answer === null) {
      turn.el.dataset.state = "error";
      turn.extra.append(el("p", {class: "muted"}, "This question was not answered (stopped, or it failed)."));
      addRetry(turn, {});
    } else {
      finish(turn, t, {followUpHint: false});
    }
  }
}

// The earlier turn a revision replaces says so ("Asked again below").
function markRevised(turns, revises) {
  const earlier = [...turns].reverse().find((t) => t.question === revises.question && !t.el.dataset.revisedLater);
  if (!earlier) return;
  earlier.el.dataset.revisedLater = revises.how;
  earlier.note.textContent = revises.how === "edit" ? "Edited and sent again below." : "Answered again below.";
  earlier.note.hidden = false;
}

// Where a passage is and when it is from; for a question about when things were saved, when it was saved.
function sourceWhere(src, field = "captured_at") {
  const parts = [MODALITY_LABEL[src.modality] || src.modality];
  if (field === "ingested_at" && src.ingested_at) parts.push(`saved ${formatWhen(src.ingested_at)}`);
  if (src.page !== null && src.page !== undefined) parts.push(`page ${src.page}`);
  const second = citedSecond(src);
  if (second !== null) parts.push(src.position ? `${src.position}` : `at ${clock(second)}`);
  if (src.heading_path && src.heading_path.length) parts.push(src.heading_path.join(" › "));
  if (src.captured_at_local || src.captured_at) parts.push(`captured ${formatWhen(src.captured_at_local || src.captured_at)}`);
  return parts.join(" · ");
}

function citeButton(src) {
  return el("button", {type: "button", class: "cite", dataset: {n: String(src.n)},
                       "aria-label": `Source ${src.n}: ${src.title || "untitled"}, ${sourceWhere(src)}`,
                       onclick: (e) => openSource(src, e.currentTarget)}, `[${src.n}]`);
}

// The answer as safe Markdown (paragraphs, lists, bold, links...), each [n] a button opening source n.
function renderAnswer(container, text, sources) {
  const byNumber = new Map(sources.map((s) => [s.n, s]));
  container.replaceChildren(renderMarkdown(text, {cite: (n) => (byNumber.has(n) ? citeButton(byNumber.get(n)) : null)}));
}

// What a cited passage says, as plain text for the clipboard: title, where, the passage.
function passageText(src) {
  return `[${src.n}] ${src.title || "Untitled"} (${sourceWhere(src)})\n${src.snippet || ""}`;
}

// A source edited after this answer quoted it: which version the answer read, and that version's original.
function editedSince(mark) {
  const now = mark.current_version ? ` (it is at version ${mark.current_version} now)` : "";
  return el("p", {class: "edited-since small"}, `Edited since this answer, which quoted version ${mark.quoted_version}${now}. `,
    el("a", {href: mark.quoted_url, target: "_blank", rel: "noopener"}, `Version ${mark.quoted_version} as quoted`));
}

function renderSourceList(turn, sources, label) {
  const items = sources.map((src) => el("li", {class: "source-card"},
    el("button", {type: "button", class: "source-open", dataset: {n: String(src.n)},
                  onclick: (e) => openSource(src, e.currentTarget)},
       el("span", {class: "src-title"}, `[${src.n}] ${src.title || "Untitled"}`),
       el("span", {class: "src-where"}, sourceWhere(src, turn.field)),
       src.snippet ? el("span", {class: "src-snippet"}, renderMarkdown(src.snippet, {inline: true, links: false}))
         : null),
    src.edited_since ? editedSince(src.edited_since) : null,
    src.snippet ? copyButton(`Copy source ${src.n}: ${src.title || "Untitled"}`, () => passageText(src), "ask-status")
      : null));
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
  turn.field = range && range.field;
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
                             "aria-label": `Change range (${described}) and ask again`,
                             onclick: () => editRange(range.start, range.end, turn.question)},
                  "Change range"));
  } else if (meta.time_filter === "preference" && meta.understood) {
    // time words read only in part: what was read ranks first, nothing is hidden
    const expr = meta.understood.expression;
    box.append(el("span", {class: "understood-range"},
                  `Time read in part${expr ? ` from “${expr}”` : ""}: ${meta.understood.description}; `
                  + "passages then come first, nothing else is left out"));
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
    renderAnswer(quoted, done.extractive.answer_markdown || done.extractive.answer, turn.sources);
    box.append(el("p", {class: "quoted-label"}, "What your data says:"), quoted);
  } else {
    box.append(el("p", {}, "None of the passages found answers it."));
  }
  const modelSaid = el("div", {class: "model-said"});
  renderAnswer(modelSaid, done.answer_markdown || done.answer, turn.sources);
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

// A cited source opens where its quoted words are (the second they are said, their page), not where its
// passage starts: the first quote of each source says where.
function pointAtQuotes(sources, quotes) {
  const first = new Map();
  for (const q of quotes) if (!first.has(q.n)) first.set(q.n, q);
  return sources.map((src) => {
    const q = first.get(src.n);
    if (!q || !q.link) return src;
    return {...src, link: q.link, page: q.page ?? src.page};
  });
}

// How an answer ends: an honest empty state, an unsupported answer flagged, or the cited answer; then
// what can be done with it (copy, regenerate, edit the question).
function finish(turn, done, {followUpHint = true} = {}) {
  turn.sources = pointAtQuotes(turn.sources, done.quotes || []);
  if (done.unsupported) {
    turn.el.dataset.state = "unsupported";
    unsupportedState(turn, done);
  } else if (done.grounded === false) {
    turn.el.dataset.state = "empty";
    emptyState(turn, done);
  } else {
    turn.el.dataset.state = "done";
    turn.text = done.answer_markdown || done.answer;
    renderAnswer(turn.answer, turn.text, turn.sources);
    renderSources(turn, done.citations || []);
    if (followUpHint) {
      turn.extra.append(el("p", {class: "muted small"}, "Ask a follow-up below; it continues this conversation."));
    }
  }
  turn.plain = done.unsupported && done.extractive ? done.extractive.answer : done.answer || "";
  addActions(turn);
}

// Copy the answer, regenerate it, edit the question and send it again.
function addActions(turn) {
  const short = turn.question.length > 60 ? `${turn.question.slice(0, 57)}…` : turn.question;
  const actions = el("div", {class: "turn-actions", role: "group", "aria-label": `Answer to “${short}”`},
    copyButton(`Copy the answer to “${short}”`, () => turn.plain, "ask-status"),
    el("button", {type: "button", class: "small-button regenerate", "aria-label": `Regenerate the answer to “${short}”`,
                  onclick: () => ask(turn.question, {revises: {question: turn.question, how: "regenerate"}})},
       "Regenerate"),
    el("button", {type: "button", class: "small-button edit-question", "aria-label": `Edit question “${short}” and send it again`,
                  onclick: () => editQuestion(turn)}, "Edit question"));
  turn.el.append(actions);
}

// The question becomes a box to change it in; sending asks it as a revision of this one.
function editQuestion(turn) {
  const id = `${turn.el.id}-edit`;
  const box = el("textarea", {id, rows: "2", maxlength: "2000", class: "edit-box"});
  box.value = turn.question;
  const restore = () => {
    form.replaceWith(turn.q);
    turn.el.querySelector(".edit-question").focus();
  };
  const form = el("form", {class: "edit-form", onsubmit: (e) => {
      e.preventDefault();
      const changed = box.value.trim();
      if (!changed) {
        box.focus();
        return;
      }
      form.replaceWith(turn.q);
      ask(changed, {revises: {question: turn.question, how: "edit"}});
    }},
    el("label", {for: id}, "Edit your question"), box,
    el("div", {class: "row"}, el("button", {type: "submit", class: "primary"}, "Send edited question"),
       el("button", {type: "button", onclick: restore}, "Cancel")));
  box.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      restore();
    } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  turn.q.replaceWith(form);
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
}

function createTurn(question, {revises = null} = {}) {
  turnCount += 1;
  const id = `turn-${turnCount}`;
  const q = el("p", {class: "q", id: `${id}-q`}, question);
  const note = el("p", {class: "revision-note muted small", hidden: !revises},
    revises ? (revises.how === "edit" ? `${REVISED.edit} from “${revises.question}”`
      : `${REVISED.regenerate}: asked again, the earlier answer is kept above`) : "");
  const meta = el("div", {class: "meta"});
  const answer = el("div", {class: "answer", "aria-live": "polite", "aria-busy": "true"});
  const extra = el("div", {class: "extra"});
  const article = el("article", {class: "turn", id, "aria-labelledby": `${id}-q`,
                                 dataset: {state: "streaming", revises: revises ? revises.how : ""}},
                     q, note, meta, answer, extra);
  $("#thread").append(article);
  article.scrollIntoView({block: "nearest"});
  return {question, el: article, q, note, meta, answer, extra, sources: [], text: "", plain: "", tokens: 0, frame: 0};
}

function emptyState(turn, done) {
  const active = state.range.from && state.range.to;
  const hint = active
    ? "Only the chosen time range was searched. Try All time, other words, or add the source first."
    : "Try other words, or add the source first (Add, beside this).";
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

// While an answer grows, the conversation stays scrolled to its end, unless the person scrolled up to
// read something else.
function following(update) {
  const thread = $("#thread");
  const atEnd = thread.scrollHeight - thread.scrollTop - thread.clientHeight < 48;
  update();
  if (atEnd && thread.scrollHeight > thread.clientHeight) thread.scrollTop = thread.scrollHeight;
}

function setAsking(on) {
  $("#ask-button").disabled = on;
  $("#stop-button").hidden = !on;
}

// Why a request failed, as a sentence: a connection that failed says so (the browser's own words are
// "Failed to fetch").
function failure(err) {
  if (err.name === "AbortError") return "Stopped.";
  if (err instanceof TypeError || err.status === 0 && /fetch|network/i.test(err.message)) {
    return "Could not reach secondbrain: it may have stopped, or the connection is down. Your question is "
      + "kept; Retry when it is running again.";
  }
  return `The answer failed: ${err.message}`;
}

function addRetry(turn, options) {
  const retry = el("button", {type: "button", class: "retry", "aria-label": `Retry “${turn.question}”`,
                              onclick: () => {
                                turn.el.remove();
                                ask(turn.question, options);
                              }}, "Retry");
  turn.extra.append(el("div", {class: "row"}, retry));
  return retry;
}

async function ask(question, options = {}) {
  const {fresh = false, revises = null} = options;
  if (asking) asking.abort();
  const turn = createTurn(question, {revises});
  const body = {question, tz: TZ, locale: LOCALE, ...rangeParams()};
  if (state.conversationId) body.conversation_id = state.conversationId;
  if (fresh) body.fresh = true;
  if (revises && state.conversationId) {
    body.revises = revises;
    markRevised([...document.querySelectorAll("#thread .turn")].filter((a) => a !== turn.el)
      .map((a) => ({question: a.querySelector(".q") ? a.querySelector(".q").textContent : "", el: a,
                    note: a.querySelector(".revision-note")})), revises);
  }
  const controller = new AbortController();
  asking = controller;
  setAsking(true);
  const render = () => {
    turn.frame = 0;
    following(() => renderAnswer(turn.answer, turn.text, turn.sources));
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
        following(() => finish(turn, data));
        loadConversations(); // it is listed (first) once answered
      } else if (message.event === "error") {
        throw new ApiError(-1, data.message);
      }
    }
    if (turn.el.dataset.state === "streaming") throw new ApiError(-1, "the answer stopped before it finished");
  } catch (err) {
    if (turn.frame) cancelAnimationFrame(turn.frame);
    turn.answer.setAttribute("aria-busy", "false");
    turn.el.dataset.state = "error";
    turn.extra.append(el("p", {class: "error", role: "alert"}, failure(err)));
    addRetry(turn, options);
    // The question is not lost: back in the box, unless something else was typed there meanwhile.
    if (!$("#question").value.trim()) $("#question").value = question;
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

// "/" (outside a text field) and Ctrl+K (or ⌘K) anywhere go to the question box; Escape leaves it.
function isTyping(target) {
  return target instanceof HTMLElement && (target.isContentEditable
    || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

function onShortcut(event) {
  if (event.defaultPrevented || event.isComposing || document.querySelector("dialog[open]")) return;
  const box = $("#question");
  if (!box || $("#main").hidden) return;
  const slash = event.key === "/" && !event.ctrlKey && !event.metaKey && !event.altKey && !isTyping(event.target);
  const ctrlK = (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === "k";
  if (slash || ctrlK) {
    event.preventDefault();
    box.focus();
    box.select();
  }
}

export function wireAsking() {
  onShowConversation(showConversation, newConversation);
  $("#ask-form").addEventListener("submit", onAsk);
  $("#question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("#ask-form").requestSubmit();
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.currentTarget.blur();
      announce("ask-status", "Left the question box.");
    }
  });
  document.addEventListener("keydown", onShortcut);
  $("#stop-button").addEventListener("click", () => asking && asking.abort());
  $("#new-conversation").addEventListener("click", () => {
    newConversation();
    $("#question").focus();
  });
}
