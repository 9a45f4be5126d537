// Markdown shown safely: answers, passages and previews keep their bold, italics, code, links, lists
// and tables, and nothing a source holds ever runs.  marked (js/marked.js) turns the text into HTML,
// with raw HTML in the text shown as text and pictures as links; DOMPurify (js/purify.js) then keeps
// only the tags and attributes below; links open in a new tab without this page's context.  Each
// "[n]" outside code can become a citation button.  Both libraries are vendored (static/licenses/).

import {Marked} from "./marked.js";
import DOMPurify from "./purify.js";

const ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);

const markdown = new Marked({gfm: true, breaks: true, async: false});
markdown.use({renderer: {
  // Raw HTML inside a source or an answer is shown as the characters it is, never as markup.
  html(token) {
    return escapeHtml(token.text);
  },
  // A picture in a source is not loaded (it could be a tracker, and the page's policy blocks it
  // anyway): its description, linked to where it is.
  image(token) {
    const label = escapeHtml(token.text || "picture");
    return /^https?:\/\//i.test(token.href || "")
      ? `<a href="${escapeHtml(token.href)}">${label}</a>` : label;
  },
  // Headings inside an answer or a passage are emphasis, not sections of this page.
  heading(token) {
    return `<p><strong>${this.parser.parseInline(token.tokens)}</strong></p>\n`;
  },
}});

const ALLOWED = {
  ALLOWED_TAGS: ["p", "br", "strong", "em", "b", "i", "del", "s", "code", "pre", "blockquote", "ul", "ol",
                 "li", "a", "hr", "table", "thead", "tbody", "tr", "th", "td", "span"],
  ALLOWED_ATTR: ["href", "title", "start"],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  RETURN_DOM_FRAGMENT: true,
};

const CITATION = /\[(\d{1,3})\]/g;
const HAS_CITATION = /\[\d{1,3}\]/;

// Each "[n]" in a text node (not inside code or a link) handed to cite(n): the node it returns
// replaces it, or the text stays when it returns null.
function linkCitations(root, cite) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement && node.parentElement.closest("code, pre, a")
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const found = [];
  while (walker.nextNode()) if (HAS_CITATION.test(walker.currentNode.data)) found.push(walker.currentNode);
  for (const node of found) {
    const parts = [];
    let last = 0;
    for (const m of node.data.matchAll(CITATION)) {
      const replacement = cite(Number(m[1]));
      if (!replacement) continue;
      parts.push(node.data.slice(last, m.index), replacement);
      last = m.index + m[0].length;
    }
    if (!parts.length) continue;
    parts.push(node.data.slice(last));
    node.replaceWith(...parts.filter((p) => p !== ""));
  }
}

function finishLinks(root) {
  for (const a of root.querySelectorAll("a[href]")) {
    a.target = "_blank";
    a.rel = "noopener noreferrer";
  }
}

// The text as safe DOM nodes (a DocumentFragment).  inline: one line of text (a passage's snippet),
// without paragraphs; links: false inside something that is itself a control (a link there would be a
// control inside a control), where a link's words stay as text; cite: see linkCitations.
export function renderMarkdown(text, {inline = false, links = true, cite = null} = {}) {
  const source = String(text || "");
  const html = inline ? markdown.parseInline(source) : markdown.parse(source);
  const fragment = DOMPurify.sanitize(html, ALLOWED);
  if (!links) for (const a of fragment.querySelectorAll("a")) a.replaceWith(...a.childNodes);
  finishLinks(fragment);
  if (cite) linkCitations(fragment, cite);
  return fragment;
}

// A container filled with the rendered text (replacing what it held).
export function showMarkdown(container, text, options = {}) {
  container.replaceChildren(renderMarkdown(text, options));
  return container;
}
