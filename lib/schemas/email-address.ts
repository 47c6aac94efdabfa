// One address, no display name, no list: what a person means by "the recipient of this email". The local part is
// printable ASCII atoms joined by dots, without `%` and `!` (old source-routing forms that relay through a second
// host), so no control, zero-width or look-alike character reaches a mail header.
export const EMAIL_ADDRESS = /^[A-Za-z0-9'+_=#$&*/?^`{|}~-]+(?:\.[A-Za-z0-9'+_=#$&*/?^`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** recipients are compared trimmed and lower-cased (suppression list, dedupe). */
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}
