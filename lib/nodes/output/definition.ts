export const outputDefinition = {
  type: "OUTPUT",
  label: "Send emails",
  description: "Sends one email per element of `forEach`, with `to`, `subject` and `body` rendered for that element. Output: { emailsSent }.",
} as const;
