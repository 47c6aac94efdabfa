/** Client-safe description of the node type (the editor's palette and docs read it). */
export const triggerDefinition = {
  type: "TRIGGER",
  label: "Trigger",
  description: "Where every run starts. Exactly one per workflow; its output is an empty object.",
} as const;
