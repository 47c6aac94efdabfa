"use client";
// Paints the document for display: validation errors and run status on nodes, item counts on edges.
// Derived objects are cached per node so an unchanged node keeps its identity and its memoized view
// does not re-render (what keeps a 200-node graph smooth while one node is dragged).
import { useMemo, useRef } from "react";
import type { NodeResult, Run, ValidationResult } from "@/lib/client/types";
import type { EdgeOverlay } from "./condition-edge";
import type { NodeOverlay } from "./flow-node";
import type { FlowEdge, FlowNode } from "./mapper";
import type { Doc } from "./use-editor-graph";

const NO_ERRORS: string[] = [];

/** How many items a finished node handed on: FILTER items, DATA_SOURCE rows, else its itemsOut. */
export function itemsOut(result: NodeResult | undefined): number | null {
  if (!result || result.status !== "SUCCESS") return null;
  if (typeof result.itemsOut === "number") return result.itemsOut;
  const out = result.output ?? {};
  if (typeof out.count === "number") return out.count;
  if (typeof out.rowCount === "number") return out.rowCount;
  return null;
}

export function useOverlays(doc: Doc, validation: ValidationResult | null, run: Run | null) {
  const errorsByNode = useMemo(() => {
    const map = new Map<string, string[]>();
    for (const e of validation?.errors ?? []) if (e.nodeId) map.set(e.nodeId, [...(map.get(e.nodeId) ?? []), e.message]);
    return map;
  }, [validation]);

  const cache = useRef(new Map<string, { base: FlowNode; errors: string[]; run?: NodeResult; out: FlowNode }>());
  const nodes = useMemo(() => {
    const next = new Map<string, { base: FlowNode; errors: string[]; run?: NodeResult; out: FlowNode }>();
    const list = doc.nodes.map((base) => {
      const errors = errorsByNode.get(base.id) ?? NO_ERRORS;
      const result = run?.nodes?.[base.id];
      const hit = cache.current.get(base.id);
      const same = hit && hit.base === base && sameErrors(hit.errors, errors) && hit.run === result;
      const out: FlowNode = same ? hit.out : { ...base, data: { ...base.data, errors, run: result } as FlowNode["data"] & NodeOverlay };
      next.set(base.id, { base, errors, run: result, out });
      return out;
    });
    cache.current = next;
    return list;
  }, [doc.nodes, errorsByNode, run]);

  const edges = useMemo(() => {
    if (!run) return doc.edges;
    return doc.edges.map((e): FlowEdge => {
      const source = run.nodes?.[e.source];
      const target = run.nodes?.[e.target];
      const overlay: EdgeOverlay = { count: itemsOut(source), dead: target?.status === "SKIPPED" };
      return { ...e, animated: source?.status === "RUNNING" || target?.status === "RUNNING", data: { ...e.data, ...overlay } };
    });
  }, [doc.edges, run]);

  return { nodes, edges };
}

function sameErrors(a: string[], b: string[]): boolean {
  return a === b || (a.length === b.length && a.every((x, i) => x === b[i]));
}
