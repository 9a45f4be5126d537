// The options page: the server's address and the key this browser saves with.  The key is checked
// against the server (GET /v1/me) before it is stored, so a typo is found here and not at the first save.

const $ = (id) => document.getElementById(id);

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

async function connect(event) {
  event.preventDefault();
  let server;
  try {
    server = serverOrigin($("server").value);
  } catch (err) {
    say(`That address is not usable: ${err.message}.`, "error");
    return;
  }
  const key = $("key").value.trim() || (await chrome.storage.local.get("key")).key || "";
  if (!key) {
    say("Paste an API key (secondbrain's Settings make one).", "error");
    return;
  }
  say("Checking…");
  let res;
  try {
    res = await fetch(`${server}/v1/me`, {credentials: "omit", headers: {"Authorization": `Bearer ${key}`}});
  } catch (err) {
    say(`secondbrain at ${server} could not be reached: is it running? (${err.message})`, "error");
    return;
  }
  if (!res.ok) {
    let detail = `the server answered ${res.status}`;
    try {
      const body = await res.json();
      if (typeof body.detail === "string") detail = body.detail;
    } catch {
      // not JSON: the status says enough
    }
    say(`That key was not accepted: ${detail}`, "error");
    return;
  }
  const me = await res.json();
  await chrome.storage.local.set({server, key});
  $("server").value = server;
  $("key").value = "";
  $("key").placeholder = "a key is stored (paste another to replace it)";
  $("key").required = false;
  say(`Connected to ${server} as ${me.user_id}. ` + (me.scope === "capture"
    ? "This key can only add to your memory."
    : "This key can also read your memory: one made with “Make a key for the browser extension” can only add."));
}

async function forget() {
  await chrome.storage.local.remove("key");
  $("key").placeholder = "";
  $("key").required = true;
  say("The key is forgotten. Revoke it in secondbrain's Settings if it may have been seen.");
}

async function start() {
  const {server, key} = await chrome.storage.local.get(["server", "key"]);
  if (server) $("server").value = server;
  if (key) {
    $("key").placeholder = "a key is stored (paste another to replace it)";
    $("key").required = false;
    say(`Connected to ${server}.`);
  }
  const link = () => {
    try {
      $("get-key").href = `${serverOrigin($("server").value)}/#settings`;
    } catch {
      $("get-key").href = "#";
    }
  };
  $("server").addEventListener("input", link);
  link();
  $("connect").addEventListener("submit", connect);
  $("forget").addEventListener("click", forget);
  document.body.dataset.ready = "true";
}

start();
