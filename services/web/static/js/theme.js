// Dark mode: follows the system's colour scheme until the person picks one, which is remembered.

import {$} from "./dom.js";

const KEY = "secondbrain.theme"; // "dark" | "light"; absent: follow the system
const media = window.matchMedia("(prefers-color-scheme: dark)");

function apply() {
  const chosen = localStorage.getItem(KEY);
  const dark = chosen ? chosen === "dark" : media.matches;
  document.documentElement.dataset.theme = dark ? "dark" : "light";
  const button = $("#theme-toggle");
  if (button) button.setAttribute("aria-pressed", String(dark));
}

export function wireTheme() {
  apply();
  media.addEventListener("change", apply);
  $("#theme-toggle").addEventListener("click", () => {
    const dark = document.documentElement.dataset.theme !== "dark";
    localStorage.setItem(KEY, dark ? "dark" : "light");
    apply();
  });
}
