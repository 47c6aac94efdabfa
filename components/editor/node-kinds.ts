// The editor's use of the node definitions (lib/nodes/<type>/definition.ts): new node ids and the canvas card's line.
import type { NodeType } from "@/lib/client/types";
import { nodeDefinition } from "@/lib/nodes/definitions";

/** The first free id like `filter_1`, `filter_2` (the trigger is just `trigger`). */
export function nextNodeId(type: NodeType, taken: Set<string>): string {
  const prefix = nodeDefinition(type).idPrefix;
  if (type === "TRIGGER" && !taken.has(prefix)) return prefix;
  for (let i = 1; ; i++) if (!taken.has(`${prefix}_${i}`)) return `${prefix}_${i}`;
}

/** One line that says what a node does, for the card on the canvas. */
export function summarize(type: NodeType, data: Record<string, unknown>, uploadNames?: ReadonlyMap<string, string>): string {
  return nodeDefinition(type).summary(data, { uploadNames });
}
