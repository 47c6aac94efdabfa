"use client";
// Where new nodes land and when the view is framed again: a version brought onto the canvas, Tidy up, a paste.
import { useReactFlow } from "@xyflow/react";
import { useCallback, useEffect, useRef, type RefObject } from "react";
import type { NodeType } from "@/lib/client/types";
import { FIT_VIEW_OPTIONS } from "./editor-canvas";
import type { useEditorGraph } from "./use-editor-graph";

export function useCanvasFraming(editor: ReturnType<typeof useEditorGraph>, canvasRef: RefObject<HTMLDivElement | null>, fitKey: string) {
  const flow = useReactFlow();
  // A version (or a run's version) brought onto the canvas is framed whole, as is the graph after Tidy up.
  const lastFitKey = useRef(fitKey);
  useEffect(() => {
    if (lastFitKey.current === fitKey) return;
    lastFitKey.current = fitKey;
    const frame = requestAnimationFrame(() => void flow.fitView(FIT_VIEW_OPTIONS));
    return () => cancelAnimationFrame(frame);
  }, [fitKey, flow]);
  const { autoLayout, addNode } = editor;
  const tidyUp = useCallback(() => {
    autoLayout();
    requestAnimationFrame(() => void flow.fitView({ ...FIT_VIEW_OPTIONS, duration: 300 }));
  }, [autoLayout, flow]);
  // Pasted nodes land beside the originals, often past the visible canvas: frame the whole graph again.
  const framePasted = useCallback(() => {
    requestAnimationFrame(() => void flow.fitView({ ...FIT_VIEW_OPTIONS, duration: 200 }));
  }, [flow]);
  const addAt = useCallback(
    (type: NodeType, clientX: number, clientY: number) => {
      const p = flow.screenToFlowPosition({ x: clientX, y: clientY });
      addNode(type, { x: Math.round(p.x - 120), y: Math.round(p.y - 30) });
    },
    [flow, addNode],
  );
  const addAtCenter = useCallback(
    (type: NodeType) => {
      const box = canvasRef.current?.getBoundingClientRect();
      if (box) addAt(type, box.left + box.width / 2, box.top + box.height / 2);
    },
    [addAt, canvasRef],
  );
  return { tidyUp, framePasted, addAt, addAtCenter };
}
