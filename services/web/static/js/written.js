// Written answers in one click: while no model writes answers, a card (on the empty Ask page and in
// Settings) says that answers quote the person's notes, looks for a local model server (Ollama, llama.cpp,
// LM Studio on their usual addresses: GET /v1/settings/answers/found) and offers to use it; once connected
// it asks the model a test question and shows what it wrote.  Only an administrator can connect one.

import {$, el} from "./dom.js";
import {api} from "./http.js";

const CARDS = ["#written-ask", "#written-settings"];
let state = {step: "hidden"};
let onConnected = () => {};

export function wireWritten(afterConnecting) {
  onConnected = afterConnecting;
  // On the Ask page the card is the empty state: it steps aside once a conversation shows.
  const thread = $("#thread");
  new MutationObserver(() => paint()).observe(thread, {childList: true});
}

// Called whenever the page learns what answers now (start, Settings, Check again).
export async function loadWritten() {
  let answers;
  try {
    ({components: {answers}} = await (await api("/v1/status")).json());
  } catch {
    return; // the status list says why
  }
  if (answers.state !== "not configured") {
    if (state.step !== "done") set({step: "hidden"});
    return;
  }
  await look();
}

async function look() {
  set({step: "looking"});
  let found;
  try {
    found = await (await api("/v1/settings/answers/found")).json();
  } catch (err) {
    set(err.status === 403 ? {step: "not-admin"} : {step: "failed", message: err.message});
    return;
  }
  set(found.servers.length ? {step: "found", server: found.servers[0], servers: found.servers} : {step: "none"});
}

async function connect(server, model) {
  set({step: "connecting", server, model});
  try {
    await api("/v1/settings/answers", {method: "PUT", json: {base_url: server.base_url, model}});
    set({step: "testing", server, model});
    const test = await (await api("/v1/settings/answers/test", {method: "POST", json: {}})).json();
    set({step: "done", server, model, test});
  } catch (err) {
    set({step: "failed", server, message: err.message});
    return;
  }
  onConnected();
}

function set(next) {
  state = next;
  paint();
}

function paint() {
  for (const id of CARDS) {
    const card = $(id);
    const emptyAsk = id !== "#written-ask" || !$("#thread").children.length || state.step === "done";
    card.hidden = state.step === "hidden" || !emptyAsk;
    card.dataset.step = state.step;
    if (!card.hidden) card.replaceChildren(...content(id.slice(1)));
  }
}

function content(prefix) {
  const lead = el("p", {class: "written-lead"}, el("strong", {}, "Answers quote your notes."),
    " For written answers, connect a local model.");
  const s = state;
  if (s.step === "done") {
    return [el("p", {class: "written-lead"}, el("strong", {}, "Written answers are on: "),
      `${s.test.model} at ${s.server.base_url}.`),
    el("p", {class: "small"}, `Test question: “${s.test.question}”`),
    el("blockquote", {class: "written-reply"}, s.test.reply),
    el("p", {class: "muted small"}, `Answered in ${s.test.seconds} s. Questions you ask now get a written answer `
      + "with its sources cited.")];
  }
  const say = (text, cls = "muted small") => el("p", {class: cls, role: "status"}, text);
  const again = el("button", {type: "button", class: "link", onclick: look}, "Look again");
  switch (s.step) {
    case "looking": return [lead, say("Looking for Ollama, llama.cpp or LM Studio on this computer…")];
    case "not-admin": return [lead, say("Ask whoever runs this secondbrain to connect one.")];
    case "none":
      return [lead, el("p", {class: "muted small", role: "status"}, "None is running on this computer now. Start ",
        "Ollama (then ", el("code", {}, "ollama pull llama3.2"), "), llama.cpp's ", el("code", {}, "llama-server"),
        " or LM Studio's server, then look again."), again];
    case "connecting": return [lead, say(`Connecting ${s.server.base_url}…`)];
    case "testing": return [lead, say(`Asking ${s.model} a test question…`)];
    case "failed": return [lead, say(`Not connected: ${s.message}`, "error small"), again];
    default: return [lead, ...offer(prefix, s.servers)];
  }
}

// The servers found, each with its models; "Use it" connects the chosen one.
function offer(prefix, servers) {
  const server = servers[0];
  const models = el("select", {id: `${prefix}-model`}, server.models.map((m) => el("option", {value: m}, m)));
  const use = el("button", {type: "button", class: "primary",
                            onclick: () => connect(server, models.value)}, "Use it for written answers");
  const others = servers.slice(1).map((o) => `${o.name} at ${o.base_url}`).join(", ");
  return [el("p", {class: "small"}, `Found ${server.name} running at ${server.base_url}.`
      + (others ? ` (Also running: ${others}.)` : "")),
    el("label", {for: `${prefix}-model`}, "Model"), models,
    el("div", {class: "row"}, use),
    el("p", {class: "muted small"}, "It is asked a test question first.")];
}
