// secondbrain's browser extension: the toolbar button saves the page you are on (its text as the
// browser shows it, so a page behind a sign-in is saved as you see it); the right-click menu saves the
// page, the selected text (as a quote with the page's address) or a link (the server fetches it).
//
// Everything goes to the server's HTTP API with the capture key the options page got when the person
// signed in there (secondbrain's page makes it), in an Authorization header and never with cookies: the
// server accepts an extension's origin only that way.  The key stays in this extension's storage; no page
// it reads ever sees it.

const MENU = {page: "sb-save-page", selection: "sb-save-selection", link: "sb-save-link"};

chrome.runtime.onInstalled.addListener(({reason}) => {
  // A new install opens the options, where the person signs in to their secondbrain.
  if (reason === chrome.runtime.OnInstalledReason.INSTALL) chrome.runtime.openOptionsPage();
  chrome.contextMenus.removeAll(() => {
    chrome.contextMenus.create({id: MENU.page, title: "Save this page to secondbrain", contexts: ["page"]});
    chrome.contextMenus.create({id: MENU.selection, title: "Save the selection to secondbrain (as a quote)",
                                contexts: ["selection"]});
    chrome.contextMenus.create({id: MENU.link, title: "Save the link to secondbrain", contexts: ["link"]});
  });
});

chrome.action.onClicked.addListener((tab) => report(tab, savePage(tab)));
chrome.contextMenus.onClicked.addListener((info, tab) => report(tab, handleMenu(info, tab)));

// What a menu item does; returns the server's answer ({job_id, status_url, ...}).
async function handleMenu(info, tab) {
  if (info.menuItemId === MENU.link) return saveLink(info.linkUrl, "");
  if (info.menuItemId === MENU.selection) return saveSelection(tab, info.selectionText || "");
  return savePage(tab);
}

async function connection() {
  const {server, key} = await chrome.storage.local.get(["server", "key"]);
  if (!server || !key) {
    chrome.runtime.openOptionsPage();
    throw new Error("Sign in to your secondbrain in the extension's options first.");
  }
  return {server, key};
}

async function call(path, body) {
  const {server, key} = await connection();
  let res;
  try {
    res = await fetch(new URL(path, server), {
      method: "POST", credentials: "omit",
      headers: {"Authorization": `Bearer ${key}`, "Content-Type": "application/json"},
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new Error(`secondbrain at ${server} could not be reached (${err.message}).`);
  }
  if (res.status === 401) throw new Error(WRONG_KEY);
  if (!res.ok) throw new Error(await reason(res));
  return res.json();
}

// The server's own 401 sentence names the key `secondbrain up` keeps for the CLI; the extension has its own.
const WRONG_KEY = "secondbrain did not accept this extension's capture key (it was revoked, or it belongs to "
  + "another secondbrain): open the extension's options and sign in again.";

async function reason(res) {
  try {
    const {detail} = await res.json();
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail)) return detail.map((d) => `${(d.loc || []).slice(-1)[0] || ""} ${d.msg}`.trim()).join("; ");
  } catch {
    // not JSON: the status says enough
  }
  return `the server answered ${res.status}`;
}

// Runs in the page: what it shows (its text as rendered, not its source) and what is selected there.
function readPage() {
  return {url: location.href, title: document.title, text: document.body ? document.body.innerText : "",
          selection: String(getSelection())};
}

async function inPage(tab) {
  try {
    const [{result}] = await chrome.scripting.executeScript({target: {tabId: tab.id}, func: readPage});
    return result;
  } catch {
    return null; // a page extensions may not read (the browser's own, the web store, a PDF viewer)
  }
}

async function savePage(tab) {
  const page = await inPage(tab);
  if (page && page.text.trim()) {
    return call("/v1/pages", {url: page.url, title: page.title || null, text: page.text});
  }
  // Nothing readable here: let the server fetch the address instead.
  return saveLink(tab.url, tab.title || "");
}

async function saveSelection(tab, fallback) {
  const page = await inPage(tab);
  // The page's own selection keeps its line breaks; the menu's copy of it does not.
  const selected = (page && page.selection.trim()) ? page.selection : fallback;
  if (!selected.trim()) throw new Error("Nothing is selected on this page.");
  const url = page ? page.url : tab.url;
  const title = (page && page.title) || tab.title || url;
  return call("/v1/notes", {text: quote(selected, title, url), title: `Quote from ${title}`});
}

async function saveLink(url, title) {
  if (!/^https?:\/\//i.test(url || "")) throw new Error("Only http and https addresses can be saved.");
  return call("/v1/urls", {url, title: title || null});
}

// A quote as Markdown: the selected lines quoted, then where they come from.
function quote(selected, title, address) {
  const lines = selected.trim().split(/\r?\n/).map((line) => `> ${line}`.trimEnd());
  const label = (title || address).replace(/([[\]\\])/g, "\\$1");
  const target = address.replace(/[()\s]/g, (c) => encodeURIComponent(c));
  return `${lines.join("\n")}\n\n— [${label}](${target})\n`;
}

// The outcome on the toolbar button: a mark, and the server's sentence when it refused.
async function report(tab, saving) {
  const tabId = tab && tab.id;
  try {
    await saving;
    await chrome.action.setBadgeBackgroundColor({color: "#1a7f37", tabId});
    await chrome.action.setBadgeText({text: "✓", tabId});
    await chrome.action.setTitle({title: "Saved to secondbrain", tabId});
  } catch (err) {
    await chrome.action.setBadgeBackgroundColor({color: "#b42318", tabId});
    await chrome.action.setBadgeText({text: "!", tabId});
    await chrome.action.setTitle({title: `Not saved: ${err.message}`, tabId});
  }
}
