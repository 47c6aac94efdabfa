"use client";
// Where new nodes land and when the view is framed again: a version brought onto the canvas, Tidy up, a paste.
import { useReactFlow } from "@xyflow/react";
import { useCallback, useEffect, useRef, type RefObject } from "react";
import type { NodeType } from "@/lib/client/types";
import { FIT_VIEW_OPTIONS } from "./editor-canvas";
import type { useEditorGraph } from "./use-editor-graph";

const CASCADE = 36;

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
  // Nodes added from the palette with the keyboard land in the middle of the view; one already there moves the new
  // one down and to the right (a cascade), so several added in a row never hide each other.
  const { getPresent } = editor;
  const addAtCenter = useCallback(
    (type: NodeType) => {
      const box = canvasRef.current?.getBoundingClientRect();
      if (!box) return;
      const p = flow.screenToFlowPosition({ x: box.left + box.width / 2, y: box.top + box.height / 2 });
      let position = { x: Math.round(p.x - 120), y: Math.round(p.y - 30) };
      const taken = getPresent().nodes.map((n) => n.position);
      const occupied = (q: { x: number; y: number }) => taken.some((t) => Math.abs(t.x - q.x) < CASCADE && Math.abs(t.y - q.y) < CASCADE);
      for (let i = 0; i < 100 && occupied(position); i++) position = { x: position.x + CASCADE, y: position.y + CASCADE };
      addNode(type, position);
    },
    [flow, addNode, getPresent, canvasRef],
  );
  return { tidyUp, framePasted, addAt, addAtCenter };
}
