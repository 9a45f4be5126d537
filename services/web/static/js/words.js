// Words shown to people: counts that agree, titles without internal prefixes, and errors as
// sentences (setting names only for admins, who can change them).

import {state} from "./state.js";

export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

// What generators write when nobody typed a title (the server applies the same rule).
const PLACEHOLDER = /^(untitled( document)?|no title|document\d*|presentation\d*|title)(\.\w{1,5})?$/i;

// A source's name: its title when it says something, else its file name; never "file:…".
export function sourceName(s, fallback = "Untitled") {
  const title = (s.title || "").trim();
  if (title && !PLACEHOLDER.test(title) && !/^(file|note):/.test(title)) return title;
  const uri = s.source_uri || "";
  if (uri.startsWith("file:")) return uri.slice(5) || fallback;
  if (/^https?:\/\//i.test(uri)) return title || uri;
  return title && !/^(file|note):/.test(title) ? title : fallback;
}

// An error as a sentence: no code quotes, no internal stage prefixes, setting names only for admins.
export function plainError(message) {
  let text = String(message || "").replace(/`([^`]*)`/g, "$1").trim();
  text = text.replace(/^(extract|fetch|chunk|embed|transcribe|ocr)( stage)? failed:\s*/i, "");
  const admin = state.me && state.me.scope === "admin";
  let hidden = false;
  if (!admin) {
    const kept = text.split(/(?<=[.;])\s+/).filter((part) => {
      const internal = /\bSB_[A-Z0-9_]+|--[a-z][\w-]+/.test(part);
      hidden ||= internal;
      return !internal;
    });
    text = kept.join(" ").replace(/[;,]\s*$/, "");
  }
  if (!text) text = "Something went wrong";
  // A sentence starts with a capital, unless it starts with an address, a path or an identifier, which
  // stay as written ("http://127.0.0.1:8766/v1 answers...", "/data/api-key is...", "SB_LLM_MODEL...").
  if (/^[a-z][a-z']*(?=[\s,;:]|$)/.test(text) && !/^[a-z][\w+.-]*:\/\//.test(text)) {
    text = text[0].toUpperCase() + text.slice(1);
  }
  if (!/[.!?]$/.test(text)) text += ".";
  if (hidden) text += " The person who runs secondbrain can change this setting.";
  return text;
}
