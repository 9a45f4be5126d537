// The conversations panel: past conversations, the latest first; search them by title and by what
// was asked, as you type; open one, rename it, delete it.  The open conversation's id is kept in
// localStorage (an id, nothing secret), so a reload opens it again through the API.

import {$, announce, confirmed, el} from "./dom.js";
import {formatWhen} from "./format.js";
import {api} from "./http.js";
import {state} from "./state.js";

const OPEN_KEY = "secondbrain.conversation";
const PHONE = window.matchMedia("(max-width: 860px)");
const SEARCH_DELAY_MS = 300;
let searchTimer = null;
let listing = null; // the AbortController of the list being fetched

// Set by the asking part: how to show an opened conversation, and how to start a new one.
let show = () => {};
let startNew = () => {};

export function onShowConversation(showHandler, newHandler) {
  show = showHandler;
  startNew = newHandler;
}

// The conversation follow-ups continue (null: the next question starts a new one).
export function setOpenConversation(id) {
  state.conversationId = id;
  if (id) localStorage.setItem(OPEN_KEY, id);
  else localStorage.removeItem(OPEN_KEY);
  for (const item of document.querySelectorAll("#conversation-list .conversation")) {
    const open = item.dataset.id === id;
    item.classList.toggle("open", open);
    const button = item.querySelector(".conversation-open");
    if (open) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
}

function row(c) {
  const title = c.title || "Untitled";
  const item = el("li", {class: "conversation", dataset: {id: c.conversation_id}},
    el("button", {type: "button", class: "conversation-open", onclick: () => openConversation(c.conversation_id)},
       el("span", {class: "conversation-title", title}, title),
       el("span", {class: "conversation-when"}, formatWhen(c.updated_at))),
    el("div", {class: "conversation-actions"},
       el("button", {type: "button", class: "link", "aria-label": `Rename conversation “${title}”`,
                     onclick: () => rename(item, c)}, "Rename"),
       el("button", {type: "button", class: "link danger-link", "aria-label": `Delete conversation “${title}”`,
                     onclick: (e) => remove(c, title, e.currentTarget)}, "Delete")));
  return item;
}

export async function loadConversations() {
  const q = $("#conversation-search").value.trim();
  if (listing) listing.abort();
  const controller = new AbortController();
  listing = controller;
  let listed;
  try {
    const params = q ? `?${new URLSearchParams({q})}` : "";
    listed = (await (await api(`/v1/conversations${params}`, {signal: controller.signal})).json()).conversations;
  } catch (err) {
    if (err.name !== "AbortError") {
      $("#conversations-summary").textContent = `Could not load your conversations: ${err.message}`;
    }
    return;
  } finally {
    if (listing === controller) listing = null;
  }
  $("#conversation-list").replaceChildren(...listed.map(row));
  $("#conversations-summary").textContent = q
    ? (listed.length ? `${listed.length} conversation${listed.length === 1 ? "" : "s"} with “${q}”.`
      : `No conversation has “${q}” in its title or questions.`)
    : listed.length ? "" : "None yet: ask a question and it is kept here.";
  setOpenConversation(state.conversationId);
}

export async function openConversation(id) {
  let conversation;
  try {
    conversation = await (await api(`/v1/conversations/${encodeURIComponent(id)}`)).json();
  } catch (err) {
    if (err.status === 404) {
      // Deleted (here or elsewhere), or another user's: forget it and start afresh.
      setOpenConversation(null);
      loadConversations();
      return;
    }
    announce("conversations-status", `Could not open that conversation: ${err.message}`);
    return;
  }
  setOpenConversation(conversation.conversation_id);
  show(conversation);
  if (PHONE.matches) $("#conversations-box").open = false; // the thread, not the list, is what they want now
}

// After the page starts (signed in): the list, and the conversation that was open before a reload.
export async function restoreConversations() {
  const id = localStorage.getItem(OPEN_KEY);
  await loadConversations();
  if (id && !state.conversationId) await openConversation(id);
}

function rename(item, c) {
  const input = el("input", {id: `rename-${c.conversation_id}`, value: c.title, maxlength: "200", required: true});
  const restore = () => item.replaceWith(row(c));
  const form = el("form", {class: "conversation-rename",
                           onsubmit: async (e) => {
                             e.preventDefault();
                             try {
                               await api(`/v1/conversations/${encodeURIComponent(c.conversation_id)}`,
                                         {method: "PATCH", json: {title: input.value.trim() || null}});
                               announce("conversations-status", "Conversation renamed.");
                             } catch (err) {
                               announce("conversations-status", `Not renamed: ${err.message}`);
                             }
                             await loadConversations();
                           }},
    el("label", {for: input.id}, "New title"), input,
    el("div", {class: "row"},
       el("button", {type: "submit"}, "Save title"),
       el("button", {type: "button", onclick: restore}, "Cancel")));
  input.addEventListener("keydown", (e) => { if (e.key === "Escape") restore(); });
  item.replaceChildren(form);
  input.select();
  input.focus();
}

async function remove(c, title, button) {
  $("#confirm-conversation-title").textContent = `Delete conversation “${title}”?`;
  if (!await confirmed($("#confirm-conversation"), button)) return;
  try {
    await api(`/v1/conversations/${encodeURIComponent(c.conversation_id)}`, {method: "DELETE"});
    announce("conversations-status", `Deleted “${title}”.`);
  } catch (err) {
    announce("conversations-status", `Not deleted: ${err.message}`);
  }
  if (state.conversationId === c.conversation_id) startNew();
  await loadConversations();
  $("#conversations-title").setAttribute("tabindex", "-1");
  $("#conversations-title").focus();
}

export function wireConversations() {
  // On a phone the list starts folded away, above the question.
  $("#conversations-box").open = !PHONE.matches;
  const search = $("#conversation-search");
  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(loadConversations, SEARCH_DELAY_MS);
  });
  search.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && search.value) {
      e.preventDefault();
      e.stopPropagation();
      search.value = "";
      loadConversations();
    }
  });
}
