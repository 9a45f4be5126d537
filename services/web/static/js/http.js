// This origin's HTTP API and its server-sent events.  The browser sends the session cookie the
// sign-in set (HttpOnly: no script sees it, and no key is kept in the browser's storage).

import {plainError} from "./words.js";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// XMLHttpRequest rather than fetch(): only it reports upload progress.  Posts `form` to `path`, showing the
// upload in `progress` (a <progress> element), and resolves with the answer to a 202.
export function postWithProgress(path, form, progress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    xhr.responseType = "json";
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) progress.value = e.loaded / e.total;
    });
    xhr.addEventListener("load", () => {
      if (xhr.status === 202) resolve(xhr.response);
      else reject(new ApiError(xhr.status, (xhr.response && xhr.response.detail) || xhr.statusText));
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, "the connection failed")));
    xhr.send(form);
  });
}

// Posts `form` to `path` asking for the answer in lines of JSON (application/x-ndjson) as the server works,
// showing the upload in `progress` and handing each line to `onLine` as it comes.  Resolves with the last
// line's `result`; rejects with an ApiError, whose `lost` is true when the connection dropped before that
// line (the server restarted, or a proxy in front of it says it is away): what the lines before said still holds.
export function postLines(path, form, progress, onLine) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    let read = 0;
    let last = null;
    const lines = () => {
      const text = xhr.responseText || "";
      let cut;
      while ((cut = text.indexOf("\n", read)) >= 0) {
        const line = text.slice(read, cut).trim();
        read = cut + 1;
        if (!line) continue;
        try {
          last = JSON.parse(line);
        } catch {
          continue;  // not a line of this answer (an error page): the end decides
        }
        onLine(last);
      }
    };
    const lost = (message) => Object.assign(new ApiError(0, message), {lost: true});
    xhr.open("POST", path);
    xhr.setRequestHeader("Accept", "application/x-ndjson");
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) progress.value = e.loaded / e.total;
    });
    // Once sent, the export is counted there: the bar moves without a value until the first line.
    xhr.upload.addEventListener("load", () => progress.removeAttribute("value"));
    xhr.addEventListener("progress", () => {
      if (xhr.status === 202) lines();
    });
    xhr.addEventListener("load", () => {
      const streamed = (xhr.getResponseHeader("Content-Type") || "").includes("ndjson");
      if (xhr.status === 202 && streamed) {
        lines();
        if (last && last.result) resolve(last.result);
        else if (last && last.error) reject(new ApiError(last.error.status, last.error.detail));
        else reject(lost("the connection dropped"));
        return;
      }
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      if (xhr.status === 202 && body) resolve(body);
      else if (xhr.status === 502 || xhr.status === 504) reject(lost(xhr.statusText || "the server is away"));
      else reject(new ApiError(xhr.status, (body && body.detail) || xhr.statusText));
    });
    xhr.addEventListener("error", () => reject(lost("the connection failed")));
    xhr.send(form);
  });
}

// Set by the page's start: what to do when the server says the session is gone.  A hook rather
// than an import, so this module depends on nothing else of the page.
let unauthorized = () => {};

export function onUnauthorized(handler) {
  unauthorized = handler;
}

export async function errorText(res) {
  try {
    const body = await res.json();
    if (typeof body.detail === "string") return body.detail;
    if (Array.isArray(body.detail)) return body.detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
    return JSON.stringify(body);
  } catch {
    return res.statusText || `HTTP ${res.status}`;
  }
}

export async function api(path, {method = "GET", json, signal, headers: extra = {}} = {}) {
  const headers = {...extra};
  let body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(json);
  }
  const res = await fetch(path, {method, headers, body, signal});
  if (res.status === 401) unauthorized();
  if (!res.ok) throw new ApiError(res.status, plainError(await errorText(res)));
  return res;
}

// Server-sent events from a fetch() response: yields {event, data} per message.
export async function* readEvents(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += value;
    // Normalise line ends, keeping a trailing \r until we know whether \n follows it.
    const keep = buffer.endsWith("\r") ? "\r" : "";
    buffer = buffer.slice(0, buffer.length - keep.length).replace(/\r\n?/g, "\n") + keep;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (field === "event") event = text;
        else if (field === "data") data.push(text);
      }
      if (data.length) yield {event, data: data.join("\n")};
    }
  }
}

// Whether a file of the API is there, without downloading it: the answer's status is read and the
// body left unread.  {ok, status, message}.
export async function probe(path) {
  const controller = new AbortController();
  const res = await fetch(path, {signal: controller.signal});
  const message = res.ok ? "" : await errorText(res);
  controller.abort();
  return {ok: res.ok, status: res.status, message};
}
