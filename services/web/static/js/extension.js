// Connecting the browser extension without a pasted key.  Its options page opens this page at
// #connect-extension and puts a small script in the tab (in the extension's isolated world), which says
// hello with window.postMessage.  Once the person, signed in here, presses Connect, the page makes a capture
// key (POST /v1/keys: it adds, never reads) and posts it back to this same window, where only that script
// and this page's own scripts listen: no other site can frame this page, and a message from a window that
// opened it has that window as its source, so it is not taken for the extension's.  The key is never shown.

import {loadKeys} from "./account.js";
import {$, announce} from "./dom.js";
import {api} from "./http.js";

const INTENT = "secondbrain.connect-extension"; // kept across signing in in this tab (a link reloads it)
let nonce = null; // the extension's script's, once it said hello

export function wireExtension() {
  if (location.hash === "#connect-extension") sessionStorage.setItem(INTENT, "1");
  window.addEventListener("message", (event) => {
    const data = event.data;
    if (event.source !== window || event.origin !== location.origin || !data) return;
    if (data.type !== "secondbrain:extension-hello" || typeof data.nonce !== "string" || data.nonce.length > 100) {
      return;
    }
    if (nonce === null) {
      nonce = data.nonce;
      paint();
    }
  });
  $("#connect-extension-button").addEventListener("click", connect);
  $("#connect-extension-cancel").addEventListener("click", () => {
    sessionStorage.removeItem(INTENT);
    $("#connect-extension").hidden = true;
  });
}

// After signing in: the card, when the extension sent the person here.
export function showConnectExtension() {
  if (!sessionStorage.getItem(INTENT)) return;
  const card = $("#connect-extension");
  card.hidden = false;
  paint();
  window.scrollTo({top: 0});
  card.focus({preventScroll: true});
}

function paint() {
  const button = $("#connect-extension-button");
  button.disabled = nonce === null;
  if (!$("#connect-extension").hidden && !button.dataset.done) {
    $("#connect-extension-status").textContent = nonce === null
      ? "Waiting for the extension: open this page from the extension's options (Sign in)."
      : "";
  }
}

async function connect() {
  const button = $("#connect-extension-button");
  button.disabled = true;
  try {
    const made = await (await api("/v1/keys", {method: "POST",
                                              json: {name: "browser extension", scope: "capture"}})).json();
    window.postMessage({type: "secondbrain:extension-key", nonce, key: made.api_key}, location.origin);
    button.dataset.done = "true";
    sessionStorage.removeItem(INTENT);
    announce("connect-extension-status", "Connected: the extension saves to your memory now. You can close this tab.");
    $("#connect-extension-cancel").textContent = "Close";
    await loadKeys();
  } catch (err) {
    announce("connect-extension-status", `Not connected. ${err.message}`);
    button.disabled = false;
  }
}
