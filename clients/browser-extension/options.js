// The options page: where the person's secondbrain runs, and signing in to it.  Signing in opens
// secondbrain's own page in a tab, where the browser's session (or the person signing in there) lets the
// page make this extension a capture key; the page hands it over to a script this extension puts in that
// tab, and the key is checked (GET /v1/me) before it is kept.  No key is ever pasted or shown.

const $ = (id) => document.getElementById(id);
const CONNECT = "#connect-extension"; // what secondbrain's page answers with its "Connect the extension" card

function say(message, state = "ok") {
  $("status").textContent = message;
  $("status").dataset.state = state;
}

// The address as typed, reduced to its origin ("127.0.0.1:8000/#settings" -> "http://127.0.0.1:8000").
function serverOrigin(value) {
  const typed = value.trim();
  const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(typed) ? typed : `http://${typed}`);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("the address must start with http:// or https://");
  return url.origin;
}

// Runs in secondbrain's tab (the extension's isolated world): says hello to the page, and resolves with
// the key the page posts back to this same window once the person presses Connect there.
function handshake(nonce) {
  return new Promise((resolve) => {
    const hello = () => window.postMessage({type: "secondbrain:extension-hello", nonce}, location.origin);
    const timer = setInterval(hello, 500); // the page may still be starting, or signing in
    window.addEventListener("message", (event) => {
      const data = event.data;
      if (event.source !== window || event.origin !== location.origin || !data) return;
      if (data.type === "secondbrain:extension-key" && data.nonce === nonce && typeof data.key === "string") {
        clearInterval(timer);
        resolve({key: data.key, origin: location.origin});
      }
    });
    hello();
  });
}

// Opens secondbrain's page and waits for the key it makes; the script is put in again after each load
// of the tab (signing in there reloads it), and only the server's own origin is listened to.
function keyFromThePage(server) {
  const nonce = crypto.randomUUID();
  return new Promise((resolve, reject) => {
    let tabId = null;
    const done = (fn, value) => {
      chrome.tabs.onUpdated.removeListener(loaded);
      chrome.tabs.onRemoved.removeListener(closed);
      fn(value);
    };
    async function inject() {
      try {
        const [{result}] = await chrome.scripting.executeScript({target: {tabId}, func: handshake, args: [nonce]});
        if (result && result.origin === server && result.key) done(resolve, {key: result.key, tabId});
      } catch {
        // The tab moved on (signing in reloads it) or shows another site: the next load tries again.
      }
    }
    function loaded(id, info, tab) {
      if (id === tabId && info.status === "complete" && tab.url && new URL(tab.url).origin === server) inject();
    }
    function closed(id) {
      if (id === tabId) done(reject, new Error("the secondbrain tab was closed before you pressed Connect there"));
    }
    chrome.tabs.onUpdated.addListener(loaded);
    chrome.tabs.onRemoved.addListener(closed);
    chrome.tabs.create({url: `${server}/${CONNECT}`}).then(async (tab) => {
      tabId = tab.id;
      const now = await chrome.tabs.get(tabId); // it may have loaded before its id was known here
      if (now.status === "complete" && now.url && new URL(now.url).origin === server) inject();
    });
  });
}

async function signIn(event) {
  event.preventDefault();
  let server;
  try {
    server = serverOrigin($("server").value);
  } catch (err) {
    say(`That address is not usable: ${err.message}.`, "error");
    return;
  }
  $("server").value = server;
  say(`Opened ${server} in a new tab: sign in there if it asks, then press “Connect the extension”.`);
  let got;
  try {
    got = await keyFromThePage(server);
  } catch (err) {
    say(`Not signed in: ${err.message}.`, "error");
    return;
  }
  let res;
  try {
    res = await fetch(`${server}/v1/me`, {credentials: "omit", headers: {"Authorization": `Bearer ${got.key}`}});
  } catch (err) {
    say(`secondbrain at ${server} could not be reached: is it running? (${err.message})`, "error");
    return;
  }
  if (!res.ok) {
    say(`secondbrain did not accept the capture key its page made (${res.status}): sign in again.`, "error");
    return;
  }
  const me = await res.json();
  await chrome.storage.local.set({server, key: got.key});
  connected(server, me);
}

function connected(server, me) {
  $("forget").hidden = false;
  $("signin").textContent = "Sign in again";
  say(`Connected to ${server}` + (me ? ` as ${me.user_id}. This extension's key can only add to your memory.` : "."));
}

async function forget() {
  await chrome.storage.local.remove("key");
  $("forget").hidden = true;
  $("signin").textContent = "Sign in";
  say("Signed out: the key is forgotten here. Revoke it in secondbrain's Settings (Your API keys, “browser "
    + "extension”) if it may have been seen.");
}

async function start() {
  const {server, key} = await chrome.storage.local.get(["server", "key"]);
  if (server) $("server").value = server;
  if (server && key) connected(server, null);
  $("connect").addEventListener("submit", signIn);
  $("forget").addEventListener("click", forget);
  document.body.dataset.ready = "true";
}

start();
