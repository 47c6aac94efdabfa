/** Client-safe description of the node type (the editor's palette and docs read it). */
export const triggerDefinition = {
  type: "TRIGGER",
  label: "Trigger",
  description:
    "Where every run starts. Exactly one per workflow. A run started by an inbound hook outputs { body } (the delivery's JSON, " +
    "e.g. {{start.body.email}}); manual and scheduled runs output an empty object.",
} as const;
