// The installed app's service worker: it keeps the page's own files (the shell) so the app opens
// without the network, and nothing else. API answers, sources, raw files and anything behind a key
// are never cached: those requests are not touched here and go to the network as they are.
//
// The server puts two constants before this text: VERSION (a hash of the shell's files, so a new
// release is a new cache) and SHELL (the shell's addresses).
/* global VERSION, SHELL */

const CACHE = `secondbrain-shell-${VERSION}`;
const SHELL_PATHS = new Set(SHELL);

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((n) => n.startsWith("secondbrain-shell-") && n !== CACHE)
      .map((n) => caches.delete(n))))
    .then(() => self.clients.claim()));
});

// A reminder pushed by `up` (encrypted to this browser; the browser decrypts it): shown as a notification, which
// opens the page's agenda when tapped.
self.addEventListener("push", (event) => {
  let note = {title: "Reminder", body: "", tag: "reminder", url: "/#agenda"};
  try {
    note = {...note, ...event.data.json()};
  } catch {
    // A push without a readable body still tells the person something is due.
  }
  event.waitUntil(self.registration.showNotification(note.title, {body: note.body, tag: note.tag,
                                                                  data: {url: note.url}}));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL((event.notification.data && event.notification.data.url) || "/", self.location.origin);
  if (url.origin !== self.location.origin) return;
  event.waitUntil(self.clients.matchAll({type: "window", includeUncontrolled: true}).then((open) => {
    const page = open.find((c) => new URL(c.url).origin === url.origin);
    return page ? page.navigate(url.href).then((c) => (c || page).focus()) : self.clients.openWindow(url.href);
  }));
});

// Only GETs of the shell itself, on this origin; "/" is the page whatever its query (a sign-in link's
// token or a share's job ids are read by the page, never kept).
function shellPath(request) {
  if (request.method !== "GET") return null;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return null;
  return SHELL_PATHS.has(url.pathname) ? url.pathname : null;
}

self.addEventListener("fetch", (event) => {
  const path = shellPath(event.request);
  if (!path) return; // network only: the browser fetches it as if there were no service worker
  // Network first, so a new release shows at once; the kept copy only when the network fails.
  event.respondWith(fetch(event.request).then((response) => {
    if (response.ok && response.type === "basic") {
      const copy = response.clone();
      event.waitUntil(caches.open(CACHE).then((cache) => cache.put(path, copy)));
    }
    return response;
  }).catch(() => caches.match(path, {cacheName: CACHE}).then((kept) => kept || Response.error())));
});
