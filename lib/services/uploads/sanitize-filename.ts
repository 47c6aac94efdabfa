const MAX_FILENAME_CHARS = 255;

/**
 * The client's filename, reduced to something safe to show: it is data only (ids name storage), but it ends up
 * in lists, logs and e-mails, so path parts, control and bidi-override characters go and the length is capped.
 */
export function sanitizeFilename(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? "";
  const cleaned = base
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "")
    .trim()
    .replace(/^\.+/, "");
  const capped = Array.from(cleaned).slice(0, MAX_FILENAME_CHARS).join("");
  return capped || "upload.csv";
}
