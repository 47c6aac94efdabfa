"use client";
// Copy, paste and duplicate of nodes (Ctrl/Cmd+C, V, D), as in n8n: the selected nodes and the edges between them.
// Pasted nodes get fresh ids, and templates, expressions and conditions that named a copied node follow the rename.
import { useEffect, useEffectEvent } from "react";
import { NODE_WIDTH } from "./layout";
import { edgeId, type FlowEdge, type FlowNode } from "./mapper";
import { nextNodeId } from "./node-kinds";
import type { Doc } from "./use-editor-graph";

type Clip = { nodes: FlowNode[]; edges: FlowEdge[] };

// One clipboard for the tab (also between workflows), kept outside React: it is not rendered.
let clipboard: Clip | null = null;
const GAP = 60;

/** Pasted nodes land beside the copied ones (to their right), not on top of them. */
function besideShift(nodes: FlowNode[]): { x: number; y: number } {
  const xs = nodes.map((n) => n.position.x);
  return { x: Math.max(...xs) - Math.min(...xs) + NODE_WIDTH + GAP, y: 0 };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Renames node references inside a value: `{{old.x}}`, `old.x` in expressions and conditions. */
function renameRefs<T>(value: T, renames: Map<string, string>): T {
  if (renames.size === 0) return value;
  let json = JSON.stringify(value);
  for (const [from, to] of renames) json = json.replace(new RegExp(`(?<![\\w.])${escape(from)}(?=\\s*\\.)`, "g"), to);
  return JSON.parse(json) as T;
}

/** The document with `clip` pasted in: new ids, shifted positions, the pasted nodes selected and nothing else. */
export function pasteInto(doc: Doc, clip: Clip, shift = besideShift(clip.nodes)): Doc {
  const taken = new Set(doc.nodes.map((n) => n.id));
  const hasTrigger = doc.nodes.some((n) => n.data.type === "TRIGGER");
  // A graph has exactly one TRIGGER: a copied one is left out rather than pasted as an error.
  const copied = clip.nodes.filter((n) => !(hasTrigger && n.data.type === "TRIGGER"));
  const renames = new Map<string, string>();
  for (const node of copied) {
    const id = nextNodeId(node.data.type, taken);
    taken.add(id);
    renames.set(node.id, id);
  }
  const nodes: FlowNode[] = copied.map((n) => ({
    ...n,
    id: renames.get(n.id)!,
    position: { x: n.position.x + shift.x, y: n.position.y + shift.y },
    data: renameRefs(n.data, renames),
    selected: true,
    dragging: false,
  }));
  const edges: FlowEdge[] = clip.edges
    .filter((e) => renames.has(e.source) && renames.has(e.target))
    .map((e) => {
      const source = renames.get(e.source)!;
      const target = renames.get(e.target)!;
      return { ...e, id: edgeId(source, target), source, target, selected: false, data: renameRefs(e.data ?? {}, renames) };
    });
  return {
    nodes: [...doc.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), ...nodes],
    edges: [...doc.edges.map((e) => (e.selected ? { ...e, selected: false } : e)), ...edges],
  };
}

export function copySelection(doc: Doc): Clip | null {
  const nodes = doc.nodes.filter((n) => n.selected);
  if (nodes.length === 0) return null;
  const ids = new Set(nodes.map((n) => n.id));
  return { nodes: structuredClone(nodes), edges: structuredClone(doc.edges.filter((e) => ids.has(e.source) && ids.has(e.target))) };
}

/** Keyboard copy/paste/duplicate on the canvas; text fields keep their own copy and paste. */
export function useClipboard(getDoc: () => Doc, commit: (next: (doc: Doc) => Doc) => void, enabled: boolean, onPasted?: () => void) {
  const onKey = useEffectEvent((e: KeyboardEvent) => {
    if (!enabled || !(e.ctrlKey || e.metaKey) || e.altKey) return;
    const target = e.target as HTMLElement | null;
    if (target?.closest("input, textarea, select, [contenteditable=true]")) return;
    // Copying text selected on the page (a run's output) stays the browser's.
    if (window.getSelection()?.toString()) return;
    const key = e.key.toLowerCase();
    if (key === "c" || key === "x") {
      const clip = copySelection(getDoc());
      if (!clip) return;
      clipboard = clip;
      e.preventDefault();
      if (key === "x") {
        const ids = new Set(clip.nodes.map((n) => n.id));
        commit((doc) => ({ nodes: doc.nodes.filter((n) => !ids.has(n.id)), edges: doc.edges.filter((ed) => !ids.has(ed.source) && !ids.has(ed.target)) }));
      }
    } else if (key === "v" && clipboard) {
      e.preventDefault();
      const clip = clipboard;
      commit((doc) => pasteInto(doc, clip));
      onPasted?.();
      // The next paste lands further along rather than on top of this one.
      const shift = besideShift(clip.nodes);
      clipboard = { nodes: clip.nodes.map((n) => ({ ...n, position: { x: n.position.x + shift.x, y: n.position.y + shift.y } })), edges: clip.edges };
    } else if (key === "d") {
      const clip = copySelection(getDoc());
      if (!clip) return;
      e.preventDefault(); // the browser's bookmark shortcut
      commit((doc) => pasteInto(doc, clip));
      onPasted?.();
    }
  });
  useEffect(() => {
    const listener = (e: KeyboardEvent) => onKey(e);
    window.addEventListener("keydown", listener);
    return () => window.removeEventListener("keydown", listener);
  }, []);
}
