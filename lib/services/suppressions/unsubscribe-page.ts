import "server-only";

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/**
 * The small pages of the unsubscribe link: the confirmation page with its one button (GET never unsubscribes by
 * itself: link scanners and previews open links), the "done" page after the button's POST, and the bad-link page.
 * Self-contained HTML, no script, nothing loaded from elsewhere.
 */
export function unsubscribePage(kind: "confirm" | "done" | "invalid", email?: string): string {
  const address = email ? `<strong>${escapeHtml(email)}</strong>` : "this address";
  const content =
    kind === "confirm"
      ? `<h1>Unsubscribe</h1><p>Stop receiving these emails at ${address}?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`
      : kind === "done"
        ? `<h1>You are unsubscribed</h1><p>${address} will not receive these emails any more.</p>`
        : `<h1>This link does not work</h1><p>Copy the whole unsubscribe link from the email, or reply to the sender.</p>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>Unsubscribe</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1f2937}
button{background:#111827;color:#fff;border:0;border-radius:.375rem;padding:.6rem 1.2rem;font-size:1rem;cursor:pointer}</style>
</head><body>${content}</body></html>`;
}
