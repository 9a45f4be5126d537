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
