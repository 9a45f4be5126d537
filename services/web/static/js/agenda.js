// The agenda: "Upcoming" (the next 14 days, then later) and "On this day" (what was saved and what happened
// on this date in earlier years), each line quoting the sentence that says it and opening its citation; and
// the calendar feeds in Settings (an address any calendar app subscribes to, shown once, revocable).

import {$, announce, el} from "./dom.js";
import {formatWhen} from "./format.js";
import {api} from "./http.js";
import {openSource} from "./viewer.js";

const SOON_DAYS = 14;
const LATER_DAYS = 351;

function zone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

// Where a line is said, in words: the source, its page or second, its section.
function where(src) {
  const parts = [src.title || "Untitled"];
  if (src.page !== null && src.page !== undefined) parts.push(`page ${src.page}`);
  if (src.position) parts.push(`at ${src.position}`);
  if (src.section) parts.push(src.section);
  return parts.join(" · ");
}

// When a line is, as short as the list allows: "10:00", "09:00–11:20", "afternoon", "all day", or the stretch of
// days (its day is the heading of its list).
function lineTime(e) {
  if (e.time) return e.end_time ? `${e.time}–${e.end_time}` : e.time;
  if (e.part) return e.part;
  return e.precision === "day" ? "all day" : e.when;
}

// A line's button is named by what it shows, in the order shown (time, name, quote, move or rhythm, source), so
// that a screen reader reads, and voice control matches, the words on screen; its day is the heading of its list.
function eventLine(e, label) {
  const src = {...e.source, n: label};
  const moved = e.moved_from ? el("span", {class: "agenda-moved"}, `moved from ${e.moved_from.when}`) : null;
  const recurs = e.recurs && e.recurs !== "habit" && e.recurs !== "yearly"
    ? el("span", {class: "agenda-moved"}, e.recurs) : null;
  const stated = e.stated ? el("span", {class: "muted small"}, ` (${e.stated})`) : null;
  return el("li", {class: `agenda-line${e.status === "cancelled" ? " cancelled" : ""}`, dataset: {id: e.id}},
    el("button", {type: "button", class: "agenda-open", onclick: (ev) => openSource(src, ev.currentTarget)},
       el("span", {class: "agenda-time"}, lineTime(e), stated),
       e.title ? el("span", {class: "agenda-title"}, e.title) : null,
       el("span", {class: "agenda-quote"}, `“${e.quote}”`),
       moved,
       recurs,
       e.status === "cancelled" ? el("span", {class: "agenda-moved"}, "cancelled") : null,
       el("span", {class: "agenda-where muted small"}, where(e.source))));
}

// "Remind me": a reminder of the line, at the default time for its kind (an hour before an appointment, 09:00 the
// day before a deadline); `up` sends it when it is due, by push to the devices that turned reminders on and by e-mail
// once SB_SMTP_* is set up.
async function remindMe(e, button) {
  button.disabled = true;
  try {
    const kept = await (await api("/v1/reminders", {method: "POST", json: {event_id: e.id, tz: zone()}})).json();
    button.textContent = "Reminder set";
    announce("agenda-status", `You will be reminded of ${e.title || "this"} on ${formatWhen(kept.remind_at)}`
      + (kept.sends ? ` by ${kept.sends}.` : "; it is sent once reminders are turned on on a device (below) or "
        + "e-mail is set up (SB_SMTP_HOST, SB_SMTP_TO)."));
  } catch (err) {
    button.disabled = false;
    announce("agenda-status", `No reminder was set. ${err.message}`);
  }
}

function withRemind(e, line, reminded) {
  if (e.status === "cancelled" || new Date(e.start) <= new Date()) return line;
  const set = reminded.has(e.id);
  line.append(el("button", {type: "button", class: "link remind", disabled: set,
                            "aria-label": set ? `Reminder set for ${e.title || "this line"}` : `Remind me of ${e.title || "this line"}`,
                            onclick: (ev) => remindMe(e, ev.currentTarget)}, set ? "Reminder set" : "Remind me"));
  return line;
}

function renderDays(container, days, reminded = new Set()) {
  container.replaceChildren(...days.map((d) => el("section", {class: "agenda-day", "aria-label": d.label},
    el("h4", {class: "agenda-date"}, d.label),
    el("ul", {class: "agenda-lines"}, ...d.events.map((e) => withRemind(e, eventLine(e, d.label), reminded))))));
}

// Later, an arrangement on a rhythm is listed the first time it falls (its line says how it repeats), not
// every fortnight of the year.
function firstOfEach(days) {
  const seen = new Set();
  return days.map((d) => ({...d, events: d.events.filter((e) => {
    if (!e.recurs || e.recurs === "habit" || e.recurs === "yearly") return true;
    const key = `${e.recurs}|${e.quote}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  })})).filter((d) => d.events.length);
}

function isoDay(date) {
  return new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 10);
}

export async function loadAgenda() {
  const tz = zone();
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  const later = new Date(today);
  later.setDate(later.getDate() + SOON_DAYS);
  try {
    const soon = await (await api(`/v1/agenda?tz=${encodeURIComponent(tz)}&days=${SOON_DAYS}`)).json();
    const {reminders} = await (await api("/v1/reminders")).json();
    const reminded = new Set(reminders.filter((r) => !r.sent_at).map((r) => r.event_id));
    renderDays($("#agenda-soon"), soon.days, reminded);
    const after = await (await api(`/v1/agenda?tz=${encodeURIComponent(tz)}&from=${isoDay(later)}T00:00:00`
      + `&days=${LATER_DAYS}`)).json();
    const laterDays = firstOfEach(after.days);
    renderDays($("#agenda-later"), laterDays, reminded);
    $("#agenda-later-box").hidden = !laterDays.length;
    const laterCount = laterDays.reduce((n, d) => n + d.events.length, 0);
    $("#agenda-summary").textContent = soon.total
      ? `${soon.total} in the next ${SOON_DAYS} days${laterCount ? `, ${laterCount} later` : ""}, from your sources.`
      : `Nothing your sources date in the next ${SOON_DAYS} days${laterCount ? `; ${laterCount} later` : ""}.`;
  } catch (err) {
    $("#agenda-summary").textContent = `The agenda could not be loaded. ${err.message}`;
  }
  try {
    const past = await (await api(`/v1/agenda/on-this-day?tz=${encodeURIComponent(tz)}&date=${isoDay(today)}`)).json();
    const box = $("#onthisday");
    if (!past.years.length) {
      box.replaceChildren(el("p", {class: "muted small"}, "Nothing saved or dated on this day in earlier years."));
      return;
    }
    box.replaceChildren(...past.years.map((y) => el("section", {class: "agenda-day", "aria-label": String(y.year)},
      el("h4", {class: "agenda-date"}, `${y.year} (${y.years_ago === 1 ? "a year ago" : `${y.years_ago} years ago`})`),
      el("ul", {class: "agenda-lines"},
        ...y.happened.map((e) => eventLine(e, String(y.year))),
        ...y.saved.map((s) => el("li", {class: "agenda-line"},
          el("button", {type: "button", class: "agenda-open",
                        onclick: (ev) => openSource({...s, n: String(y.year), snippet: "", captured_at_local: s.captured_at},
                                                    ev.currentTarget)},
             el("span", {class: "agenda-time"}, "saved"),
             el("span", {class: "agenda-quote"}, s.title || "Untitled"),
             el("span", {class: "agenda-where muted small"}, `${s.modality} · ${formatWhen(s.captured_at)}`))))))));
  } catch (err) {
    $("#onthisday").replaceChildren(el("p", {class: "error"}, `Could not load this day. ${err.message}`));
  }
}

export async function loadFeeds() {
  try {
    const {feeds} = await (await api("/v1/feeds")).json();
    const live = feeds.filter((f) => !f.revoked);
    $("#feed-list").replaceChildren(...live.map((f) => el("li", {class: "key", dataset: {feedId: f.feed_id}},
      el("span", {class: "key-name"}, f.name),
      el("span", {class: "muted small"}, [`made ${formatWhen(f.created_at)}`, f.timezone,
        f.last_used_at ? `last read ${formatWhen(f.last_used_at)}` : "not read yet"].join(" · ")),
      el("button", {type: "button", class: "revoke", "aria-label": `Revoke the calendar feed ${f.name}`,
                    onclick: (e) => revokeFeed(f, e.currentTarget)}, "Revoke"))));
  } catch (err) {
    announce("feeds-status", `Your calendar feeds could not be loaded. ${err.message}`);
  }
}

async function makeFeed(event) {
  event.preventDefault();
  const name = $("#feed-name").value.trim() || "calendar";
  try {
    const made = await (await api("/v1/feeds", {method: "POST", json: {name, tz: zone()}})).json();
    $("#feed-name").value = "";
    $("#new-feed-value").value = made.url;
    $("#new-feed").hidden = false;
    $("#new-feed-value").focus();
    $("#new-feed-value").select();
    await loadFeeds();
  } catch (err) {
    announce("feeds-status", `The calendar address was not made. ${err.message}`);
  }
}

async function revokeFeed(feed, button) {
  button.disabled = true;
  try {
    await api(`/v1/feeds/${encodeURIComponent(feed.feed_id)}`, {method: "DELETE"});
    announce("feeds-status", `Revoked ${feed.name}: its address no longer opens your agenda.`);
    $("#new-feed").hidden = true;
    await loadFeeds();
    $("#feeds-title").focus();
  } catch (err) {
    button.disabled = false;
    announce("feeds-status", `The calendar feed was not revoked. ${err.message}`);
  }
}

export function wireAgenda() {
  $("#agenda-refresh").addEventListener("click", loadAgenda);
  $("#feed-form").addEventListener("submit", makeFeed);
}
