"use client";
// Live validation: the graph (without positions, which never affect validity) is sent to
// POST /api/workflows/validate at most once per pause in editing.
import { useEffect, useMemo, useState } from "react";
import { errorMessage } from "@/lib/client/api";
import { validateGraph } from "@/lib/client/hooks";
import type { Graph, ValidationResult } from "@/lib/client/types";

const DEBOUNCE_MS = 500;

export const structureKey = (graph: Graph) => JSON.stringify({ nodes: graph.nodes.map(({ position: _p, ...n }) => n), edges: graph.edges });

/**
 * The graph without positions, as a value that keeps its identity while only positions change: what
 * validation and the inspector (template suggestions, upstream columns) depend on, so dragging a node
 * neither re-validates nor re-renders them.
 */
export function useGraphStructure(graph: Graph): Graph {
  const key = useMemo(() => structureKey(graph), [graph]);
  return useMemo(() => JSON.parse(key) as Graph, [key]);
}

export function useValidation(graph: Graph): { result: ValidationResult | null; error: string | null; pending: boolean } {
  const key = useMemo(() => structureKey(graph), [graph]);
  const [state, setState] = useState<{ key: string; result: ValidationResult | null; error: string | null }>({ key: "", result: null, error: null });

  useEffect(() => {
    let cancelled = false;
    const timer = setTimeout(() => {
      validateGraph(JSON.parse(key) as Graph).then(
        (result) => !cancelled && setState({ key, result, error: null }),
        (e) => !cancelled && setState({ key, result: null, error: errorMessage(e) }),
      );
    }, DEBOUNCE_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [key]);

  return { result: state.result, error: state.error, pending: state.key !== key };
}
