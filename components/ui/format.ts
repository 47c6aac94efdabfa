const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "3 minutes ago" for recent times, a date otherwise. */
export function timeAgo(iso: string | null | undefined): string {
  if (!iso) return "—";
  const seconds = Math.round((new Date(iso).getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return "just now";
  if (abs < 3600) return relative.format(Math.round(seconds / 60), "minute");
  if (abs < 86400) return relative.format(Math.round(seconds / 3600), "hour");
  if (abs < 86400 * 7) return relative.format(Math.round(seconds / 86400), "day");
  return new Date(iso).toLocaleDateString("en", { year: "numeric", month: "short", day: "numeric" });
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function formatDuration(start: string | null | undefined, end: string | null | undefined): string {
  if (!start || !end) return "—";
  const ms = new Date(end).getTime() - new Date(start).getTime();
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const grouped = new Intl.NumberFormat("en");

/** 20,000 rather than 20000: counts people read at a glance. */
export function formatCount(n: number): string {
  return grouped.format(n);
}

// Field names as the API spells them → the words the forms use, for messages that start with a field name
// ("forEach must not be empty" → "For each must not be empty").
const FIELD_WORDS: Record<string, string> = {
  forEach: "“For each”",
  uploadId: "The upload",
  driveFileId: "The Drive file",
  expr: "The filter expression",
  source: "The source",
  to: "“To”",
  subject: "The subject",
  body: "The body",
  prompt: "The prompt",
  output: "The declared outputs",
  fullName: "Your name",
  newPassword: "The new password",
  currentPassword: "The current password",
};

/** A message for people: field names in words, and no pointer to the JSON `errors` array the list already shows. */
export function humanize(message: string): string {
  return message
    .replace(/^([a-zA-Z]+)(?= )/, (word) => FIELD_WORDS[word] ?? word)
    .replace(/:?\s*see `errors`\.?/g, ".")
    .replace(/\.\./g, ".")
    .replace(/\s+\./g, ".");
}
