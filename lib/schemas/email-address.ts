// One address, no display name, no list: what a person means by "the recipient of this email".
export const EMAIL_ADDRESS = /^[^\s@<>(),;:"\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** CONTRACT 11: recipients are compared trimmed and lower-cased (suppression list, dedupe). */
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}
