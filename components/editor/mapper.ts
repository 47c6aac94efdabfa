// The only place that converts between the domain graph (stored, API format) and React Flow's objects.
import { MarkerType, type Edge, type Node } from "@xyflow/react";
import type { Graph, GraphEdge, NodeType } from "@/lib/client/types";
import { layoutPositions } from "./layout";

export interface FlowNodeData extends Record<string, unknown> {
  type: NodeType;
  config: Record<string, unknown>;
}
export type FlowNode = Node<FlowNodeData, "flowmail">;
export interface FlowEdgeData extends Record<string, unknown> {
  condition?: string;
}
export type FlowEdge = Edge<FlowEdgeData, "condition">;

export const edgeId = (source: string, target: string) => `${source}->${target}`;

export function toFlowEdge(edge: GraphEdge): FlowEdge {
  return {
    id: edgeId(edge.source, edge.target),
    source: edge.source,
    target: edge.target,
    type: "condition",
    markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16, color: "#94a3b8" },
    data: edge.condition ? { condition: edge.condition } : {},
  };
}

/** Graph → React Flow. Any node without a position gets one from an automatic layout of the whole graph. */
export function graphToFlow(graph: Graph): { nodes: FlowNode[]; edges: FlowEdge[] } {
  const needsLayout = graph.nodes.some((n) => !n.position);
  const laidOut = needsLayout ? layoutPositions(graph.nodes.map((n) => n.id), graph.edges) : null;
  const nodes: FlowNode[] = graph.nodes.map((n) => ({
    id: n.id,
    type: "flowmail",
    position: n.position ?? laidOut?.get(n.id) ?? { x: 0, y: 0 },
    data: { type: n.type, config: n.data ?? {} },
    deletable: true,
  }));
  return { nodes, edges: graph.edges.map(toFlowEdge) };
}

/** React Flow → graph, with rounded positions so a saved layout comes back the same. */
export function flowToGraph(nodes: FlowNode[], edges: FlowEdge[]): Graph {
  return {
    nodes: nodes.map((n) => ({
      id: n.id,
      type: n.data.type,
      data: n.data.config,
      position: { x: Math.round(n.position.x), y: Math.round(n.position.y) },
    })),
    edges: edges.map((e) => {
      const condition = e.data?.condition?.trim();
      return condition ? { source: e.source, target: e.target, condition } : { source: e.source, target: e.target };
    }),
  };
}
