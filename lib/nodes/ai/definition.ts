export const aiDefinition = {
  type: "AI",
  label: "AI",
  description: "Asks the account's AI provider; `prompt` may hold templates. Output: one field per declared output (string, number, integer, boolean, array, object).",
} as const;
