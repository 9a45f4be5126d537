// The page as an installed app: its service worker (static/sw.js keeps the page's own files, nothing
// else), and what another app shared to secondbrain.  A share is a POST to /share, which captures it
// and sends the app to /?shared=<job ids>; here the page says so and follows each capture's progress.

import {$, announce} from "./dom.js";
import {api} from "./http.js";
import {trackCapture} from "./progress.js";
import {plural} from "./words.js";

export function registerWorker() {
  if (!("serviceWorker" in navigator)) return;
  // The page works the same without it (a browser that refuses it, plain http off this computer).
  navigator.serviceWorker.register("/sw.js", {scope: "/"}).catch(() => {});
}

// The job ids a share brought (null: the page was not opened by one), taken out of the address bar so
// a reload does not show them again.
export function takeShared() {
  const params = new URLSearchParams(location.search);
  if (!params.has("shared")) return null;
  const ids = (params.get("shared") || "").split(",").filter((id) => /^[A-Za-z0-9_-]{1,100}$/.test(id));
  params.delete("shared");
  const rest = params.toString();
  history.replaceState(null, "", location.pathname + (rest ? `?${rest}` : "") + location.hash);
  return ids;
}

// A share that came while signed out (the server kept nothing of it): the sentence for the sign-in form.
export function sharedSignedOut() {
  const params = new URLSearchParams(location.search);
  if (params.get("share") !== "signed-out") return "";
  params.delete("share");
  const rest = params.toString();
  history.replaceState(null, "", location.pathname + (rest ? `?${rest}` : "") + location.hash);
  return "Sign in, then share again: what you shared was not kept, as this phone was not signed in.";
}

// What a share brought, at the top of the page where the app opens (on a phone the Add card is far
// below): a sentence, then each capture with its progress until the person presses Done.
export async function showShared(ids) {
  const box = $("#shared");
  box.hidden = false;
  $("#shared-done").onclick = () => { box.hidden = true; $("#shared-list").replaceChildren(); };
  window.scrollTo({top: 0});
  box.focus({preventScroll: true});
  if (!ids.length) {
    announce("shared-status", "Nothing came with the share: no link, text or file to keep.");
    return;
  }
  announce("shared-status", `Kept ${plural(ids.length, "capture", "captures")}: each can be found once it `
    + "shows Ready.");
  for (const id of ids) {
    let name = "Shared item";
    try {
      const job = await (await api(`/v1/jobs/${encodeURIComponent(id)}`)).json();
      name = job.title || job.source_uri || name;
    } catch {
      // The line still follows the capture; only its name is missing.
    }
    trackCapture(id, name, {list: "#shared-list", keep: true});
  }
}
