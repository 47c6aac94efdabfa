// TRIGGER's client-safe half: where every run starts (its settings — schedule and hooks — are the workflow's).
import { defineNode, type Zod } from "../node-definition";

export const buildTriggerDataSchema = (zod: Zod) => zod.strictObject({});

export const triggerDefinition = defineNode({
  type: "TRIGGER",
  dataSchema: buildTriggerDataSchema,
  label: "Trigger",
  description: "Where every run starts",
  docs:
    "Where every run starts. Exactly one per workflow. A run started by an inbound hook outputs { body } (the delivery's JSON, " +
    "e.g. {{start.body.email}}); manual and scheduled runs output an empty object.",
  idPrefix: "trigger",
  accent: "bg-violet-100 text-violet-700",
  defaultData: () => ({}),
  outputFields: () => [],
  hasInput: false,
  summary: () => "Run manually or through the API",
  form: [{ name: "trigger", label: "Schedule and hooks", kind: "trigger-panel" }],
});
