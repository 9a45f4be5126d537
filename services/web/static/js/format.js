// Dates in the reader's own zone, durations, and the names shown for each kind of source.

export const MODALITY_LABEL = {pdf: "PDF", web: "Web page", audio: "Recording", image: "Image", note: "Note",
                               markdown: "Markdown", text: "Text", office: "Document"};

export function pad(n) {
  return String(n).padStart(2, "0");
}

export function isoLocal(d) {
  const offset = -d.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  const abs = Math.abs(offset);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:` +
    `${pad(d.getMinutes())}:${pad(d.getSeconds())}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

export function dateValue(d) {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export function parseDateValue(value) {
  const [y, m, d] = value.split("-").map(Number);
  return new Date(y, m - 1, d);
}

export function startOfDay(d) {
  return new Date(d.getFullYear(), d.getMonth(), d.getDate());
}

export function addDays(d, n) {
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + n);
}

export const DAY = new Intl.DateTimeFormat(undefined, {weekday: "short", day: "numeric", month: "short", year: "numeric"});
const WHEN = new Intl.DateTimeFormat(undefined, {day: "numeric", month: "short", year: "numeric",
                                                 hour: "2-digit", minute: "2-digit"});

export function formatWhen(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : WHEN.format(d);
}

export function formatSpan(from, to) {
  // [from, to) shown with an inclusive last day
  const last = addDays(startOfDay(new Date(to.getTime() - 1)), 0);
  const first = startOfDay(from);
  return first.getTime() === last.getTime() ? DAY.format(first) : `${DAY.format(first)} – ${DAY.format(last)}`;
}

// A duration as people say it (as `secondbrain import` does): 45 s, 3 min 20 s, 1 h 05 min.
export function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
}

export function clock(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}
