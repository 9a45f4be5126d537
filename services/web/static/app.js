// secondbrain web app: sign in, ask with cited answers, capture, and watch sources.
//
// No framework and no build step: native ES modules under js/, one per part of the page, each
// importing what it uses.  This entry wires them together and starts the page.  Every call goes to
// this origin's HTTP API (js/http.js); raw files are shown from blob: URLs (js/viewer.js).

import {wireAsking} from "./js/ask.js";
import {wireCapture} from "./js/capture.js";
import {wireImports} from "./js/imports.js";
import {wireConversations} from "./js/conversations.js";
import {onUnauthorized} from "./js/http.js";
import {loadSettings, wireSettings} from "./js/settings.js";
import {openSession, sessionEnded, showApp, showSignIn, whoAmI, wireSignIn} from "./js/signin.js";
import {loadSources, wireSources} from "./js/sources.js";
import {onRangeChange, setRange, wireTime} from "./js/time.js";
import {wireViewer} from "./js/viewer.js";
import {loadAccount, wireAccount} from "./js/account.js";
import {loadAgenda, loadFeeds, wireAgenda} from "./js/agenda.js";
import {wireProgress} from "./js/progress.js";
import {wireSourcePage} from "./js/source-page.js";
import {wireTheme} from "./js/theme.js";
import {loadPush, registerWorker, sharedSignedOut, showShared, takeShared, wirePush} from "./js/pwa.js";
import {wireWritten} from "./js/written.js";
import {wireExtension} from "./js/extension.js";

const OLD_KEY_NAME = "secondbrain.key"; // where earlier versions kept the key: removed at start

function wire() {
  onUnauthorized(sessionEnded);
  onRangeChange(loadSources);
  wireSignIn();
  wireTime();
  wireAsking();
  wireConversations();
  wireCapture();
  wireImports();
  wireSources();
  wireViewer();
  wireSettings();
  wireTheme();
  wireProgress();
  wireSourcePage();
  wireAccount();
  wireAgenda();
  wirePush();
  wireWritten(loadSettings);
  wireExtension();
}

async function start() {
  wire();
  setRange("all");
  registerWorker();
  const shared = takeShared();
  sessionStorage.removeItem(OLD_KEY_NAME);
  localStorage.removeItem(OLD_KEY_NAME);
  let message = sharedSignedOut();
  const token = new URLSearchParams(location.search).get("token");
  if (token) {
    // The one-time link: exchange its token, then take it out of the address bar and the history.
    history.replaceState(null, "", location.pathname + location.hash);
    try {
      const opened = await openSession({token, remember: true});
      if (!opened.ok) message = `This sign-in link did not work. ${opened.message}`;
    } catch (err) {
      message = `Could not reach secondbrain. Check that it is running, then reload. (${err.message})`;
    }
  }
  try {
    const result = await whoAmI();
    if (result.ok) {
      showApp(result.me);
      loadSettings();
      loadAccount();
      loadAgenda();
      loadPush();
      loadFeeds();
      if (shared) showShared(shared);
    }
    else showSignIn(message);
  } catch (err) {
    showSignIn(`Could not reach secondbrain. Check that it is running, then reload. (${err.message})`);
  }
  document.body.dataset.ready = "true";
}

start();
