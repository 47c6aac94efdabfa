"use client";
// Paints the document for display: validation errors and run status on nodes, item counts on edges.
// Node overlays are not merged into the node objects: they travel in a map (NodeOverlaysContext) that
// each node card reads by id. The document's nodes go to React Flow as they are, so a drag changes only
// the dragged node's object, and a new validation or run result never re-creates the 200 node objects
// (what keeps a large graph smooth while one node is dragged).
import { useMemo } from "react";
import type { NodeResult, Run, ValidationResult } from "@/lib/client/types";
import type { EdgeOverlay } from "./condition-edge";
import type { NodeOverlay } from "./flow-node";
import type { FlowEdge } from "./mapper";
import type { Doc } from "./use-editor-graph";

/** How many items a finished node handed on: FILTER items, DATA_SOURCE rows, else its itemsOut. */
export function itemsOut(result: NodeResult | undefined): number | null {
  if (!result || result.status !== "SUCCESS") return null;
  if (typeof result.itemsOut === "number") return result.itemsOut;
  const out = result.output ?? {};
  if (typeof out.count === "number") return out.count;
  if (typeof out.rowCount === "number") return out.rowCount;
  return null;
}

/** Node id → its validation errors and its result in the shown run. */
export function nodeOverlays(validation: ValidationResult | null, run: Run | null): Map<string, NodeOverlay> {
  const map = new Map<string, NodeOverlay>();
  for (const e of validation?.errors ?? []) {
    if (!e.nodeId) continue;
    const prev = map.get(e.nodeId);
    map.set(e.nodeId, { ...prev, errors: [...(prev?.errors ?? []), e.message] });
  }
  for (const [id, result] of Object.entries(run?.nodes ?? {})) map.set(id, { ...map.get(id), run: result });
  return map;
}

export function useOverlays(doc: Doc, validation: ValidationResult | null, run: Run | null) {
  const overlays = useMemo(() => nodeOverlays(validation, run), [validation, run]);

  const edges = useMemo(() => {
    if (!run) return doc.edges;
    return doc.edges.map((e): FlowEdge => {
      const source = run.nodes?.[e.source];
      const target = run.nodes?.[e.target];
      const overlay: EdgeOverlay = { count: itemsOut(source), dead: target?.status === "SKIPPED" };
      return { ...e, animated: source?.status === "RUNNING" || target?.status === "RUNNING", data: { ...e.data, ...overlay } };
    });
  }, [doc.edges, run]);

  return { nodes: doc.nodes, edges, overlays };
}
