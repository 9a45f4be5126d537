// Reloading the sources list, for the parts of the page that change what it shows (a failed capture tried
// again or removed, a source deleted from its page): they ask here rather than import the list, which
// imports them.

let loader = async () => {};

// The list registers how it loads itself (sources.js, once loaded).
export function setSourcesLoader(load) {
  loader = load;
}

export function reloadSources() {
  return loader();
}
