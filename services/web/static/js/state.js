// What more than one part of the page reads or changes.  State that only one module uses (the job
// streams, the viewer's blob: URLs, the recorder) stays private to that module.

export const state = {
  me: null, // who /v1/me says is signed in
  range: {kind: "all", from: null, to: null}, // the time filter in force: [from, to) as local Dates
  conversationId: null, // the conversation follow-up questions continue
};
