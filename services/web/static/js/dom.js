// Small DOM helpers: query, build elements, announce to screen readers.

export const $ = (selector, root = document) => root.querySelector(selector);

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function announce(id, message) {
  const region = document.getElementById(id);
  region.textContent = "";
  // Cleared first, so the same message is announced again.
  setTimeout(() => { region.textContent = message; }, 50);
}

// Opens a confirmation dialog and waits for it to close: true when its "delete" button closed it;
// otherwise focus goes back to the button that opened it.
export async function confirmed(dialog, button) {
  dialog.returnValue = "";
  dialog.showModal();
  await new Promise((resolve) => dialog.addEventListener("close", resolve, {once: true}));
  if (dialog.returnValue === "delete") return true;
  button.focus();
  return false;
}

// Puts text on the clipboard; true when it got there.  The Clipboard API needs a secure context
// (https:// or this computer's own address); elsewhere a hidden text box is copied the old way.
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the old way
  }
  const active = document.activeElement;
  const box = el("textarea", {readonly: true, "aria-hidden": "true", class: "visually-hidden"});
  box.value = text;
  document.body.append(box);
  box.select();
  let done = false;
  try {
    done = document.execCommand("copy");
  } catch {
    done = false;
  }
  box.remove();
  if (active && active.focus) active.focus();
  return done;
}

// A "Copy" button: copies what text() returns, says "Copied" on itself for a moment and tells screen
// readers in the live region `statusId`.
export function copyButton(label, text, statusId) {
  const button = el("button", {type: "button", class: "copy small-button", "aria-label": label}, "Copy");
  button.addEventListener("click", async () => {
    const ok = await copyText(text());
    // What it says and its name change together (the name keeps the words shown).
    button.textContent = ok ? "Copied" : "Copy failed";
    button.setAttribute("aria-label", `${ok ? "Copied" : "Copy failed"}: ${label}`);
    button.dataset.copied = String(ok);
    announce(statusId, ok ? "Copied to the clipboard." : "This browser did not allow copying; select the text instead.");
    setTimeout(() => {
      button.textContent = "Copy";
      button.setAttribute("aria-label", label);
      delete button.dataset.copied;
    }, 2000);
  });
  return button;
}
