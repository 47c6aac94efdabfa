"use client";
// Paints the document for display: validation errors and run status on nodes, item counts on edges.
// Node overlays are not merged into the node objects: they travel in a map (NodeOverlaysContext) that
// each node card reads by id. The document's nodes go to React Flow as they are, so a drag changes only
// the dragged node's object, and a new validation or run result never re-creates the 200 node objects
// (what keeps a large graph smooth while one node is dragged).
import { useMemo } from "react";
import { humanize } from "@/components/ui";
import { findCycles } from "@/lib/graph/validate-structure";
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

/** The index of the edge an error is about (`graph.edges[3].condition` → 3), or null for node and graph errors. */
export function edgeIndexOf(path: string): number | null {
  const match = /^graph\.edges\[(\d+)\]/.exec(path);
  return match ? Number(match[1]) : null;
}

/**
 * Edge id → its validation messages (a condition's errors belong to the edge, not to the node it leads to). A cycle
 * is reported on one edge; every edge of its loop carries the message, so the whole loop is drawn.
 */
export function edgeIssues(validation: ValidationResult | null, edges: { source: string; target: string }[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  const add = (index: number, message: string) => {
    const edge = edges[index];
    if (!edge) return;
    const id = `${edge.source}->${edge.target}`;
    const list = map.get(id) ?? [];
    if (!list.includes(message)) map.set(id, [...list, message]);
  };
  for (const e of validation?.errors ?? []) {
    const index = edgeIndexOf(e.path);
    if (index === null) continue;
    const message = humanize(e.message);
    add(index, message);
    if (e.code === "cycle" && e.nodeId) {
      const order = [e.nodeId, ...new Set(edges.flatMap((edge) => [edge.source, edge.target]))];
      const loop = findCycles(order, edges.map((edge, i) => ({ ...edge, index: i }))).find((indexes) => indexes.includes(index));
      for (const i of loop ?? []) add(i, message);
    }
  }
  return map;
}

/** Node id → its validation errors and its result in the shown run. */
export function nodeOverlays(validation: ValidationResult | null, run: Run | null): Map<string, NodeOverlay> {
  const map = new Map<string, NodeOverlay>();
  for (const e of validation?.errors ?? []) {
    if (!e.nodeId || edgeIndexOf(e.path) !== null) continue;
    const prev = map.get(e.nodeId);
    map.set(e.nodeId, { ...prev, errors: [...(prev?.errors ?? []), humanize(e.message)] });
  }
  for (const [id, result] of Object.entries(run?.nodes ?? {})) map.set(id, { ...map.get(id), run: result });
  return map;
}

/**
 * `run` is drawn only when it ran the graph on screen; `stale` (the graph changed since) keeps node statuses but
 * dimmed, and drops the item counts, which described edges that may no longer exist.
 */
export function useOverlays(doc: Doc, validation: ValidationResult | null, run: Run | null, edgeGraph: { source: string; target: string }[], stale = false) {
  const overlays = useMemo(() => {
    const map = nodeOverlays(validation, run);
    if (stale) for (const [id, o] of map) if (o.run) map.set(id, { ...o, stale: true });
    return map;
  }, [validation, run, stale]);
  const issues = useMemo(() => edgeIssues(validation, edgeGraph), [validation, edgeGraph]);

  const edges = useMemo(() => {
    if (!run && issues.size === 0) return doc.edges;
    return doc.edges.map((e): FlowEdge => {
      const source = run?.nodes?.[e.source];
      const target = run?.nodes?.[e.target];
      const invalid = issues.has(e.id);
      // A problem edge is drawn above the nodes: an edge closing a cycle runs back up behind them otherwise.
      const raised = invalid ? { zIndex: 1000 } : {};
      if (!run || stale) return invalid ? { ...e, ...raised, data: { ...e.data, invalid } } : e;
      const overlay: EdgeOverlay = { count: itemsOut(source), dead: target?.status === "SKIPPED", invalid };
      return { ...e, ...raised, animated: source?.status === "RUNNING" || target?.status === "RUNNING", data: { ...e.data, ...overlay } };
    });
  }, [doc.edges, run, issues, stale]);

  return { nodes: doc.nodes, edges, overlays, edgeIssues: issues };
}
