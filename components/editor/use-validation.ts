"use client";
// Live validation, never stale. The graph's own rules (lib/graph/validate, pure) run in the browser on every edit —
// undo and redo included — so a fixed problem disappears and a new one shows at once. What needs the database
// (an upload that is gone, a column the CSV lacks, Drive not linked) comes from POST /api/workflows/validate at most
// once per pause in editing; while a newer check is on its way, only its findings on nodes that did not change since
// are kept. Positions never affect validity and are left out.
import { useEffect, useMemo, useState } from "react";
import { errorMessage } from "@/lib/client/api";
import { validateGraph as validateOnServer } from "@/lib/client/hooks";
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

type Issue = ValidationResult["errors"][number];
type Validate = (graph: Graph) => ValidationResult;
const signature = (e: Issue) => `${e.code}\u0000${e.path}\u0000${e.message}`;

// The validator (with zod and the node schemas, ~100 KB gzip) is loaded after the editor shows, not with it: the
// editor's first load stays within its JavaScript budget. Until it arrives (a moment), the server's answers stand in.
let validator: Validate | null = null;
let loading: Promise<Validate> | null = null;
function loadValidator(): Promise<Validate> {
  loading ??= import("@/lib/graph/validate").then((m) => {
    validator = (graph) => {
      const { valid, errors } = m.validateGraph(graph);
      return { valid, errors };
    };
    return validator;
  });
  return loading;
}

/**
 * The server's findings the browser cannot make (they need the database), from a check of `checked`, as they apply to
 * `current`: all of them when it is the same graph; else those about a node whose data did not change since.
 * `validate`: the browser's validator (without it every finding counts as the server's).
 */
export function serverOnlyIssues(server: ValidationResult, checked: Graph, current: Graph, validate: Validate | null): Issue[] {
  return stillApplying(databaseIssues(server, checked, validate), checked, current);
}

function databaseIssues(server: ValidationResult, checked: Graph, validate: Validate | null): Issue[] {
  if (!validate) return server.errors;
  const known = new Set(validate(checked).errors.map(signature));
  return server.errors.filter((e) => !known.has(signature(e)));
}

function stillApplying(extra: Issue[], checked: Graph, current: Graph): Issue[] {
  if (extra.length === 0 || structureKey(checked) === structureKey(current)) return extra;
  const dataOf = (graph: Graph, id: string) => {
    const node = graph.nodes.find((n) => n.id === id);
    return node ? JSON.stringify([node.type, node.data]) : undefined;
  };
  return extra.filter((e) => e.nodeId !== undefined && dataOf(checked, e.nodeId) !== undefined && dataOf(checked, e.nodeId) === dataOf(current, e.nodeId));
}

export function useValidation(graph: Graph): { result: ValidationResult | null; error: string | null; pending: boolean } {
  const key = useMemo(() => structureKey(graph), [graph]);
  const [validate, setValidate] = useState<Validate | null>(() => validator);
  useEffect(() => {
    if (validate) return;
    let cancelled = false;
    void loadValidator().then((v) => !cancelled && setValidate(() => v));
    return () => {
      cancelled = true;
    };
  }, [validate]);
  const local = useMemo(() => (validate ? validate(graph) : null), [validate, graph]);
  const [server, setServer] = useState<{ key: string; graph: Graph | null; result: ValidationResult | null; error: string | null }>({
    key: "",
    graph: null,
    result: null,
    error: null,
  });

  useEffect(() => {
    let cancelled = false;
    const timer = setTimeout(() => {
      const checked = JSON.parse(key) as Graph;
      validateOnServer(checked).then(
        (result) => !cancelled && setServer({ key, graph: checked, result, error: null }),
        (e) => !cancelled && setServer({ key, graph: checked, result: null, error: errorMessage(e) }),
      );
    }, DEBOUNCE_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [key]);

  const pending = server.key !== key;
  // Worked out once per server answer; each edit only re-checks which of them still apply.
  const database = useMemo(() => (server.result && server.graph ? databaseIssues(server.result, server.graph, validate) : []), [server, validate]);
  const result = useMemo<ValidationResult | null>(() => {
    if (!local && !server.result) return null;
    const extra = server.graph ? stillApplying(database, server.graph, graph) : [];
    const errors = [...(local?.errors ?? []), ...extra];
    return { valid: errors.length === 0, errors };
  }, [local, database, server.graph, server.result, graph]);
  return { result, error: pending ? null : server.error, pending };
}
