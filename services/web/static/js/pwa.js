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

// "Turn on reminders on this device": the browser's permission to notify, then a push subscription made with the
// server's public key and kept by the server, which pushes each due reminder to it (static/sw.js shows it).  The
// browser's push service is the one that carries it (Google's for Chrome, Mozilla's for Firefox, Apple's on an
// iPhone, where the page must be added to the home screen first).
function keyBytes(b64url) {
  const raw = atob(b64url.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - b64url.length % 4) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

function sameKey(subscription, key) {
  const had = subscription.options && subscription.options.applicationServerKey;
  if (!had) return false;
  const a = new Uint8Array(had);
  return a.length === key.length && a.every((b, i) => b === key[i]);
}

function pushShown(on) {
  $("#push-on").hidden = on;
  $("#push-off").hidden = !on;
}

export async function loadPush() {
  const box = $("#push-box");
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    box.hidden = true; // this browser cannot be sent reminders (or the page is not on https)
    return;
  }
  try {
    const {public_key: key, enabled} = await (await api("/v1/push/key")).json();
    if (!enabled) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    const registration = await navigator.serviceWorker.ready;
    const had = await registration.pushManager.getSubscription();
    pushShown(Boolean(had && Notification.permission === "granted" && sameKey(had, keyBytes(key))));
  } catch {
    box.hidden = true;
  }
}

async function turnOn() {
  const button = $("#push-on");
  button.disabled = true;
  try {
    const permission = await Notification.requestPermission();
    if (permission !== "granted") {
      announce("push-status", "Notifications are blocked for this page: allow them in the browser's site settings, "
        + "then turn reminders on again.");
      return;
    }
    const {public_key: key} = await (await api("/v1/push/key")).json();
    const registration = await navigator.serviceWorker.ready;
    const old = await registration.pushManager.getSubscription();
    if (old && !sameKey(old, keyBytes(key))) await old.unsubscribe();
    let subscription;
    try {
      subscription = await registration.pushManager.subscribe({userVisibleOnly: true,
                                                                applicationServerKey: keyBytes(key)});
    } catch (err) {
      announce("push-status", `This browser could not reach its push service, so reminders cannot come here. `
        + `(${err.message})`);
      return;
    }
    const kept = await (await api("/v1/push/subscriptions", {method: "POST", json: subscription.toJSON()})).json();
    localStorage.setItem("push-subscription-id", kept.subscription_id);
    pushShown(true);
    announce("push-status", "Reminders will reach this device.");
  } catch (err) {
    announce("push-status", `Reminders were not turned on. ${err.message}`);
  } finally {
    button.disabled = false;
  }
}

async function turnOff() {
  const button = $("#push-off");
  button.disabled = true;
  try {
    const registration = await navigator.serviceWorker.ready;
    const had = await registration.pushManager.getSubscription();
    if (had) await had.unsubscribe();
    const id = localStorage.getItem("push-subscription-id");
    if (id) await api(`/v1/push/subscriptions/${encodeURIComponent(id)}`, {method: "DELETE"}).catch(() => {});
    localStorage.removeItem("push-subscription-id");
    pushShown(false);
    announce("push-status", "Reminders no longer come to this device.");
  } catch (err) {
    announce("push-status", `Reminders were not turned off. ${err.message}`);
  } finally {
    button.disabled = false;
  }
}

export function wirePush() {
  $("#push-on").addEventListener("click", turnOn);
  $("#push-off").addEventListener("click", turnOff);
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
