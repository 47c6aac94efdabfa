"use client";
// The React Flow canvas of the editor: drop target for the palette, node and edge handlers, background, minimap.
import { Background, Controls, MiniMap, ReactFlow, type EdgeTypes, type NodeTypes } from "@xyflow/react";
import { useCallback, type ReactNode, type RefObject } from "react";
import type { NodeType } from "@/lib/client/types";
import { useTheme } from "@/components/shell/theme";
import { ConditionEdge } from "./condition-edge";
import { FlowNodeComponent, NodeOverlaysContext, UploadNamesContext, type NodeOverlay } from "./flow-node";
import type { FlowEdge, FlowNode } from "./mapper";
import { DRAG_MIME } from "./palette";
import type { useEditorGraph } from "./use-editor-graph";

// Defined once at module level: new objects per render would make React Flow re-create every node.
const nodeTypes: NodeTypes = { flowmail: FlowNodeComponent };
const edgeTypes: EdgeTypes = { condition: ConditionEdge };
// Also constants: React Flow copies a changed option object into its store, which wakes every subscriber.
export const FIT_VIEW_OPTIONS = { maxZoom: 1, padding: 0.3 };
const DEFAULT_EDGE_OPTIONS = { type: "condition" };
const DELETE_KEYS = ["Backspace", "Delete"];

type EditorGraph = ReturnType<typeof useEditorGraph>;

export interface EditorCanvasProps {
  canvasRef: RefObject<HTMLDivElement | null>;
  /** A palette item dropped at this point of the screen. */
  onDropNode: (type: NodeType, clientX: number, clientY: number) => void;
  uploadNames: Map<string, string>;
  overlays: ReadonlyMap<string, NodeOverlay>;
  nodes: FlowNode[];
  edges: FlowEdge[];
  /** A stored version is shown: nothing changes, a click only selects. */
  viewing: boolean;
  readOnly: boolean;
  editor: Pick<EditorGraph, "onNodesChange" | "onEdgesChange" | "onConnect" | "onReconnect" | "checkpoint">;
  /** Below 768 px: node changes limited to selection. */
  onlySelection: EditorGraph["onNodesChange"];
  onNodeClick: (nodeId: string) => void;
  onPaneClick?: () => void;
  fitView: boolean;
  showMinimap: boolean;
  /** Notes drawn over the canvas (version banner, empty canvas, graph problems). */
  children?: ReactNode;
}

export function EditorCanvas({ canvasRef, onDropNode, uploadNames, overlays, nodes, edges, viewing, readOnly, editor, onlySelection, onNodeClick, onPaneClick, fitView, showMinimap, children }: EditorCanvasProps) {
  const theme = useTheme();
  const nodeColor = useCallback((n: FlowNode) => minimapColor(overlays.get(n.id)), [overlays]);
  return (
    <div
      ref={canvasRef}
      className="relative min-w-0 flex-1"
      data-testid="canvas"
      onDragOver={(e) => {
        if (e.dataTransfer.types.includes(DRAG_MIME)) {
          e.preventDefault();
          e.dataTransfer.dropEffect = "move";
        }
      }}
      onDrop={(e) => {
        const type = e.dataTransfer.getData(DRAG_MIME) as NodeType;
        if (!type) return;
        e.preventDefault();
        onDropNode(type, e.clientX, e.clientY);
      }}
    >
      <UploadNamesContext.Provider value={uploadNames}>
        <NodeOverlaysContext.Provider value={overlays}>
          <ReactFlow<FlowNode, FlowEdge>
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            edgeTypes={edgeTypes}
            onNodesChange={viewing ? undefined : readOnly ? onlySelection : editor.onNodesChange}
            onEdgesChange={viewing ? undefined : readOnly ? undefined : editor.onEdgesChange}
            onConnect={readOnly ? undefined : editor.onConnect}
            onReconnect={readOnly ? undefined : editor.onReconnect}
            onNodeDragStart={editor.checkpoint}
            onNodeClick={(_, node) => onNodeClick(node.id)}
            onPaneClick={onPaneClick}
            nodesDraggable={!readOnly}
            nodesConnectable={!readOnly}
            edgesReconnectable={!readOnly}
            onlyRenderVisibleElements
            deleteKeyCode={readOnly ? null : DELETE_KEYS}
            colorMode={theme.resolved}
            // Fit only a graph that exists when opened: on an empty canvas the first dropped node would
            // otherwise trigger the fit and jump away from where it was dropped.
            fitView={fitView}
            fitViewOptions={FIT_VIEW_OPTIONS}
            minZoom={0.1}
            defaultEdgeOptions={DEFAULT_EDGE_OPTIONS}
          >
            <Background gap={20} color={theme.resolved === "dark" ? "#334155" : "#e2e8f0"} />
            {showMinimap && <MiniMap pannable zoomable className="!bg-white ring-1 ring-slate-200" nodeColor={nodeColor} />}
            <Controls showInteractive={false} />
          </ReactFlow>
        </NodeOverlaysContext.Provider>
      </UploadNamesContext.Provider>
      {children}
    </div>
  );
}

function minimapColor(overlay: NodeOverlay | undefined): string {
  const status = overlay?.run?.status;
  if (status === "SUCCESS") return "#10b981";
  if (status === "FAILED" || overlay?.errors?.length) return "#ef4444";
  if (status === "RUNNING") return "#3366ff";
  return "#cbd5e1";
}
