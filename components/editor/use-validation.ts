"use client";
// Live validation: the graph (without positions, which never affect validity) is sent to
// POST /api/workflows/validate at most once per pause in editing.
import { useEffect, useState } from "react";
import { errorMessage } from "@/lib/client/api";
import { validateGraph } from "@/lib/client/hooks";
import type { Graph, ValidationResult } from "@/lib/client/types";

const DEBOUNCE_MS = 500;

export function useValidation(graph: Graph): { result: ValidationResult | null; error: string | null; pending: boolean } {
  const key = JSON.stringify({ nodes: graph.nodes.map(({ position: _p, ...n }) => n), edges: graph.edges });
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
