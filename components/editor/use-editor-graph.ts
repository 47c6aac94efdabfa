"use client";
// The editor's document: React Flow nodes and edges under undo/redo, and the operations on them.
import {
  applyEdgeChanges, applyNodeChanges, type Connection, type EdgeChange, type NodeChange,
} from "@xyflow/react";
import { useCallback, useMemo, useRef } from "react";
import type { Graph, NodeType } from "@/lib/client/types";
import { layoutPositions } from "./layout";
import { edgeId, flowToGraph, graphToFlow, toFlowEdge, type FlowEdge, type FlowNode } from "./mapper";
import { NODE_ID_PATTERN, RESERVED_NODE_IDS } from "@/lib/graph/node-ids";
import { nodeDefinition } from "@/lib/nodes/definitions";
import { nextNodeId } from "./node-kinds";
import { useHistory } from "./use-history";

export interface Doc {
  nodes: FlowNode[];
  edges: FlowEdge[];
}


export function useEditorGraph(initial: Graph) {
  const history = useHistory<Doc>(() => graphToFlow(initial));
  // renameNode reads the nodes through getPresent (not from render) so it stays the same function while
  // nodes move, which keeps memoized panels still.
  const { present, getPresent, commit, replace } = history;
  // The Delete key arrives as two calls from React Flow in one task — the selected edges and the edges of the
  // selected nodes first, then the nodes: one coalescing key for that task makes it one undo step, so a single
  // Ctrl+Z brings the nodes back with their edges.
  const deletion = useRef<string | null>(null);
  const deletionKey = useCallback(() => {
    if (!deletion.current) {
      deletion.current = `delete:${Date.now()}:${Math.random()}`;
      setTimeout(() => {
        deletion.current = null;
      }, 0);
    }
    return deletion.current;
  }, []);

  const onNodesChange = useCallback(
    (changes: NodeChange<FlowNode>[]) => {
      const apply = (doc: Doc): Doc => {
        const removed = new Set(changes.flatMap((c) => (c.type === "remove" ? [c.id] : [])));
        const nodes = applyNodeChanges(changes, doc.nodes);
        // Removing a node removes its edges in the same undo step.
        const edges = removed.size ? doc.edges.filter((e) => !removed.has(e.source) && !removed.has(e.target)) : doc.edges;
        return { nodes, edges };
      };
      if (changes.some((c) => c.type === "remove")) commit(apply, deletionKey());
      else if (changes.some((c) => c.type === "add")) commit(apply);
      else replace(apply);
    },
    [commit, replace, deletionKey],
  );

  const onEdgesChange = useCallback(
    (changes: EdgeChange<FlowEdge>[]) => {
      const apply = (doc: Doc): Doc => ({ ...doc, edges: applyEdgeChanges(changes, doc.edges) });
      if (changes.some((c) => c.type === "remove")) commit(apply, deletionKey());
      else if (changes.some((c) => c.type === "add")) commit(apply);
      else replace(apply);
    },
    [commit, replace, deletionKey],
  );

  const onConnect = useCallback(
    (connection: Connection) => {
      if (!connection.source || !connection.target || connection.source === connection.target) return;
      commit((doc) => {
        if (doc.edges.some((e) => e.id === edgeId(connection.source, connection.target))) return doc;
        return { ...doc, edges: [...doc.edges, toFlowEdge({ source: connection.source, target: connection.target })] };
      });
    },
    [commit],
  );

  const onReconnect = useCallback(
    (old: FlowEdge, connection: Connection) => {
      if (!connection.source || !connection.target || connection.source === connection.target) return;
      commit((doc) => {
        const replacement = { ...toFlowEdge({ source: connection.source, target: connection.target, condition: old.data?.condition }) };
        const rest = doc.edges.filter((e) => e.id !== old.id && e.id !== replacement.id);
        return { ...doc, edges: [...rest, replacement] };
      });
    },
    [commit],
  );

  const addNode = useCallback(
    (type: NodeType, position: { x: number; y: number }) => {
      let id = "";
      commit((doc) => {
        id = nextNodeId(type, new Set(doc.nodes.map((n) => n.id)));
        const node: FlowNode = { id, type: "flowmail", position, data: { type, config: nodeDefinition(type).defaultData() }, selected: true };
        return { nodes: [...doc.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), node], edges: doc.edges.map((e) => (e.selected ? { ...e, selected: false } : e)) };
      });
      return id;
    },
    [commit],
  );

  const updateConfig = useCallback(
    (nodeId: string, config: Record<string, unknown>) =>
      commit((doc) => ({ ...doc, nodes: doc.nodes.map((n) => (n.id === nodeId ? { ...n, data: { ...n.data, config } } : n)) }), `config:${nodeId}`),
    [commit],
  );

  const updateCondition = useCallback(
    (id: string, condition: string) =>
      commit((doc) => ({ ...doc, edges: doc.edges.map((e) => (e.id === id ? { ...e, data: condition ? { condition } : {} } : e)) }), `edge:${id}`),
    [commit],
  );

  /** Renames a node and its edges; returns a sentence when the new id is not allowed. */
  const renameNode = useCallback(
    (oldId: string, newId: string): string | null => {
      if (!NODE_ID_PATTERN.test(newId)) return "Use a letter or _ first, then letters, digits or _ (at most 32).";
      if (RESERVED_NODE_IDS.includes(newId)) return `“${newId}” is reserved.`;
      if (getPresent().nodes.some((n) => n.id === newId)) return `Another node is already called “${newId}”.`;
      const swap = (id: string) => (id === oldId ? newId : id);
      commit((doc) => ({
        nodes: doc.nodes.map((n) => (n.id === oldId ? { ...n, id: newId } : n)),
        edges: doc.edges.map((e) => (e.source === oldId || e.target === oldId ? toFlowEdge({ source: swap(e.source), target: swap(e.target), condition: e.data?.condition }) : e)),
      }));
      return null;
    },
    [commit, getPresent],
  );

  const removeNode = useCallback(
    (nodeId: string) => commit((doc) => ({ nodes: doc.nodes.filter((n) => n.id !== nodeId), edges: doc.edges.filter((e) => e.source !== nodeId && e.target !== nodeId) })),
    [commit],
  );
  const removeEdge = useCallback((id: string) => commit((doc) => ({ ...doc, edges: doc.edges.filter((e) => e.id !== id) })), [commit]);

  const autoLayout = useCallback(
    () =>
      commit((doc) => {
        const positions = layoutPositions(doc.nodes.map((n) => n.id), doc.edges);
        return { ...doc, nodes: doc.nodes.map((n) => ({ ...n, position: positions.get(n.id) ?? n.position })) };
      }),
    [commit],
  );

  const graph = useMemo(() => flowToGraph(present.nodes, present.edges), [present]);
  return {
    ...history, graph, onNodesChange, onEdgesChange, onConnect, onReconnect, addNode, updateConfig, updateCondition,
    renameNode, removeNode, removeEdge, autoLayout,
  };
}
