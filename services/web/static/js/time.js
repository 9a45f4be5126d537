// The time filter (all time, today, this week, this month, a custom range) in the browser's zone.
// It scopes both the questions and the source list.

import {$} from "./dom.js";
import {addDays, dateValue, formatSpan, isoLocal, parseDateValue, startOfDay} from "./format.js";
import {state} from "./state.js";

// Set by the page's start (the source list reloads); a hook so this module needs no view above it.
let changed = () => {};

export function onRangeChange(handler) {
  changed = handler;
}

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

export function setRange(kind, from = null, to = null) {
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
  if (kind !== "custom" || (f && t)) changed();
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

// The range in force as request parameters (none for all time).
export function rangeParams() {
  const {from, to} = state.range;
  return from && to ? {from: isoLocal(from), to: isoLocal(to)} : {};
}

// Fill the custom range with a range the server understood, ready to be adjusted and asked again.
export function editRange(start, end, question) {
  const from = start ? new Date(start) : new Date(2000, 0, 1);
  const to = end ? new Date(end) : addDays(startOfDay(new Date()), 1);
  $("#range-from").value = dateValue(from);
  $("#range-to").value = dateValue(new Date(to.getTime() - 1));
  setRange("custom", startOfDay(from), addDays(startOfDay(new Date(to.getTime() - 1)), 1));
  $("#question").value = question;
  $("#range-from").focus();
  $("#time-summary").textContent += " Adjust the days if you like, apply, then ask again (your question is back in the box).";
}

export function wireTime() {
  for (const chip of document.querySelectorAll(".chip")) chip.addEventListener("click", onChip);
  $("#custom-range").addEventListener("submit", applyCustomRange);
}
