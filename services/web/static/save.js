// The page the bookmarklet opens: what to save comes in the address's fragment (the page's URL, title,
// selection and text), which never reaches the server's logs.  Nothing is saved until the person presses
// Save here, on secondbrain's own origin, where the session cookie is sent; the site the bookmarklet ran
// on never sees a key or this page (it is opened with noopener, and cannot be framed).

import {$} from "./js/dom.js";
import {api} from "./js/http.js";

const given = new URLSearchParams(location.hash.slice(1));
const url = given.get("url") || "";
const selection = (given.get("selection") || "").trim();
const text = given.get("text") || "";

// A quote as Markdown: the selected lines quoted, then where they come from.
export function quote(selected, title, address) {
  const lines = selected.split(/\r?\n/).map((line) => `> ${line}`.trimEnd());
  const label = (title || address).replace(/([\[\]\\])/g, "\\$1");
  const target = address.replace(/[()\s]/g, (c) => encodeURIComponent(c));
  return `${lines.join("\n")}\n\n— [${label}](${target})\n`;
}

async function save(event) {
  event.preventDefault();
  const button = $("#save-button");
  const title = $("#save-page-title").value.trim();
  const what = new FormData(event.target).get("what");
  button.disabled = true;
  $("#save-status").textContent = "Saving…";
  try {
    let res;
    if (what === "quote") {
      res = await api("/v1/notes", {method: "POST", json: {text: quote(selection, title, url),
                                                           title: `Quote from ${title || url}`}});
    } else if (text.trim()) {
      // The text as the browser showed it: also right for a page behind a sign-in the server cannot fetch.
      res = await api("/v1/pages", {method: "POST", json: {url, title: title || null, text}});
    } else {
      res = await api("/v1/urls", {method: "POST", json: {url, title: title || null}});
    }
    const {job_id: job} = await res.json();
    $("#save-status").textContent = "Saved. It will be searchable in a moment.";
    $("#save-status").dataset.job = job;
    $("#save-form").hidden = true;
    $("#save-close").focus();
  } catch (err) {
    if (err.status === 401) $("#save-signin").hidden = false;
    $("#save-status").textContent = `Not saved. ${err.message}`;
    button.disabled = false;
  }
}

// A bookmarklet runs inside the page, which can tamper with what it sends: a page could claim another
// site's address, and saving would make a new version of that site's saved copy.  The browser itself
// says where the window was opened from (unless that page hides it): a different site is shown.
function openedElsewhere() {
  try {
    const from = new URL(document.referrer).origin;
    const claimed = new URL(url).origin;
    return from !== claimed && from !== location.origin ? from : null;
  } catch {
    return null; // no referrer, or no valid address: nothing to compare
  }
}

function start() {
  $("#save-page-title").value = given.get("title") || "";
  $("#save-url").textContent = url || "(no address was given)";
  $("#save-quote").textContent = selection;
  $("#save-quote-choice").hidden = !selection;
  const from = openedElsewhere();
  if (from) {
    $("#save-elsewhere").textContent = `This window was opened from ${from}, not from the address above. `
      + "Save only if you trust that page.";
    $("#save-elsewhere").hidden = false;
  }
  $(selection ? "#save-as-quote" : "#save-as-page").checked = true;
  if (!/^https?:\/\//i.test(url)) {
    $("#save-button").disabled = true;
    $("#save-status").textContent = "Only pages with an http or https address can be saved.";
  }
  $("#save-form").addEventListener("submit", save);
  // The form lives outside the page it was opened from, so Close also works after saving.
  $("#save-close").addEventListener("click", () => window.close());
  // Sign-in is checked now, so the person learns before pressing Save; saving checks it again.
  api("/v1/me").catch((err) => { if (err.status === 401) $("#save-signin").hidden = false; });
  document.body.dataset.ready = "true";
}

start();
